"""Input scripts: parsing, timing, move_turn, errors; the shipped examples all parse."""

from __future__ import annotations

import math

import numpy as np

import pytest

from pfnn_demo.errors import ScriptError
from pfnn_demo.sim.input_script import InputScript, example_scripts
from pfnn_demo.sim.input_state import STICK_DEAD_ZONE, InputState


def test_examples_parse_and_cover_the_promised_motions():
    examples = example_scripts()
    assert {"walk_circle", "jog_and_stop", "strafe", "crouch_through", "turn_180"} <= set(examples)
    for path in examples.values():
        script = InputScript.load(path)
        assert script.frames > 60 and script.description


def test_segments_follow_each_other_in_frames():
    script = InputScript.from_dict({"segments": [
        {"duration": 0.5}, {"duration": 1.0, "move": [0, 1], "jog": 0.5, "crouch": True}, {"duration": 0.25}]})
    assert script.frames == 30 + 60 + 15
    assert script.state(29).move_y == 0 and script.state(30).move_y == 1
    assert script.state(89).jog == 0.5 and script.state(89).crouch
    assert script.state(90).move_y == 0 and not script.state(90).crouch
    assert script.state(10_000).move_y == 0      # past the end: the last segment holds
    assert script.state(0).ik and script.state(0).camera_yaw is None


def test_move_turn_rotates_the_stick_over_the_segment():
    script = InputScript.from_dict({"segments": [{"duration": 1.0, "move": [0, 1], "move_turn": 90}]})
    start, middle = script.state(0), script.state(30)
    assert (start.move_x, start.move_y) == pytest.approx((0, 1))
    assert (middle.move_x, middle.move_y) == pytest.approx((-math.sqrt(0.5), math.sqrt(0.5)))


def test_camera_pin_is_in_degrees():
    script = InputScript.from_dict({"segments": [{"duration": 1, "camera_yaw": 90}]})
    assert script.state(0).camera_yaw == pytest.approx(math.pi / 2)


@pytest.mark.parametrize("spec, message", [
    ({}, "'segments' list"),
    ({"segments": []}, "at least one segment"),
    ({"segments": [{"move": [0, 1]}]}, "segment 1: missing 'duration'"),
    ({"segments": [{"duration": 1}, {"duration": 1, "move": [0, 2]}]}, r"segment 2: 'move' values must lie in \[-1, 1\]"),
    ({"segments": [{"duration": 1, "jog": "fast"}]}, "'jog' must be a number"),
    ({"segments": [{"duration": 1, "crouch": 1}]}, "'crouch' must be true or false"),
    ({"segments": [{"duration": 1, "speed": 3}]}, "unknown field"),
    ({"segments": [{"duration": -1}]}, "'duration' must lie in"),
])
def test_malformed_scripts(spec, message):
    with pytest.raises(ScriptError, match=message):
        InputScript.from_dict(spec)


def test_bad_json_file_and_unknown_name(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{")
    with pytest.raises(ScriptError, match="bad.json: not valid JSON"):
        InputScript.load(path)
    with pytest.raises(ScriptError, match="example scripts are: .*walk_circle"):
        InputScript.load("no_such_script")


def test_dead_zone_and_sdl_axes():
    assert InputState.dead_zone(0.1, 0.1) == (0.0, 0.0)
    assert InputState.dead_zone(STICK_DEAD_ZONE, 0.0) == (STICK_DEAD_ZONE, 0.0)
    state = InputState.from_sdl_axes([0, -32768, 16384, 0, -32768, 32767])
    assert (state.move_x, state.move_y, state.look_x) == pytest.approx((0, 1, 0.5))
    assert state.strafe == 0 and state.jog == pytest.approx(1, abs=1e-4)


def test_a_script_can_name_its_scene_and_start():
    from pfnn_demo.sim.scene import load_scene

    script = InputScript.from_dict({"scene": "jumps", "start": [10, -720], "segments": [{"duration": 1.0}]})
    assert script.scene == "jumps"
    np.testing.assert_allclose(script.starts_in(load_scene("jumps")), [[10, -720]])
    assert script.starts_in(load_scene("plaza")) is None          # written for another scene
    with pytest.raises(ScriptError, match="'start' must be"):
        InputScript.from_dict({"start": [1], "segments": [{"duration": 1.0}]})
    with pytest.raises(ScriptError, match="'scene' must be"):
        InputScript.from_dict({"scene": 3, "segments": [{"duration": 1.0}]})
