"""The shipped network (network/pfnn.npz) under every example script: it does what the stick asks."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.tools.evaluation import record
from pfnn_demo.sim.input_script import InputScript
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
from pfnn_demo.sim.scene import load_scene
from pfnn_demo.resources import default_network_path
from pfnn_demo.sim.weights import load_npz


@pytest.fixture(scope="module")
def network():
    return PhaseFunctionedNetwork(load_npz(default_network_path()), "cubic")


def _play(network, script_name: str, scene: str = "plaza"):
    script = InputScript.load(script_name)
    recording = record(network, load_scene(scene), script)
    assert float(recording["completed"]) == 1.0
    assert np.all(np.isfinite(recording["joint_positions"]))
    spans, start = {}, 0
    for segment in script.segments:
        spans.setdefault(segment.label, slice(start + segment.frames // 3, start + segment.frames))  # settled part
        start += segment.frames
    return recording, spans


def _speed(recording, span) -> float:
    root = recording["root_position"][span][:, [0, 2]].astype(np.float64)
    return float(np.linalg.norm(np.diff(root, axis=0), axis=1).mean() * 60)


def _head_over_ground(recording, span, scene) -> float:
    terrain = load_scene(scene).heightmap
    head = recording["joint_positions"][span][:, 16].astype(np.float64)
    return float(np.median(head[:, 1] - terrain.sample(head[:, 0], head[:, 2])))


def test_it_walks_jogs_and_stops(network):
    recording, spans = _play(network, "jog_and_stop")
    walk, jog, stop = _speed(recording, spans["walk"]), _speed(recording, spans["jog"]), _speed(recording, spans["stop"])
    # The walk is measured from 0.7 s after setting off (the original network walks at 114 units/s
    # by then, the shipped one at about 90) and the original network jogs 1.6x as fast as it walks.
    assert 75 < walk < 220 and jog > 1.4 * walk and stop < 15, (walk, jog, stop)
    back = _speed(recording, spans["jog back"])
    assert back > 1.4 * walk, (back, walk)


def test_it_turns_round(network):
    recording, spans = _play(network, "turn_180")
    direction = recording["root_direction"]
    before = direction[spans["walk forward"]][-1]
    after = direction[spans["turn around and walk"]][-1]
    assert np.dot(before[[0, 2]], after[[0, 2]]) < -0.8


def _travel_against_facing(recording, span) -> tuple[float, float, float]:
    """Distance travelled, and the sideways and forward shares of it relative to the facing."""
    root = recording["root_position"][span][:, [0, 2]].astype(np.float64)
    travel = root[-1] - root[0]
    facing = recording["root_direction"][span][:, [0, 2]].mean(axis=0)
    facing /= np.linalg.norm(facing)
    distance = float(np.linalg.norm(travel))
    return distance, abs(facing[0] * travel[1] - facing[1] * travel[0]) / distance, float(facing @ travel) / distance


def test_it_side_steps_and_steps_back_facing_ahead(network):
    recording, spans = _play(network, "strafe")
    distance, sideways, _ = _travel_against_facing(recording, spans["side-step left"])
    assert distance > 50 and sideways > 0.7
    distance, _, forward = _travel_against_facing(recording, spans["walk backwards"])
    assert distance > 50 and forward < -0.3
    # Setting off sideways from a stand it turns partly towards the way it goes (the original does
    # not): at least a third of the way is still sideways.
    distance, sideways, _ = _travel_against_facing(recording, spans["side-step right"])
    assert distance > 50 and sideways > 0.3


def test_it_crouches(network):
    recording, spans = _play(network, "crouch_through", "tunnel")
    upright = _head_over_ground(recording, spans["walk on, outside"], "tunnel")
    crouched = _head_over_ground(recording, spans["crouch-walk by button"], "tunnel")
    assert crouched < 0.85 * upright, (crouched, upright)
    assert _speed(recording, spans["crouch-walk by button"]) > 40


def test_it_walks_in_circles_without_stopping(network):
    recording, spans = _play(network, "walk_circle")
    assert _speed(recording, spans["circle left"]) > 90 and _speed(recording, spans["circle right"]) > 90


def test_its_feet_stay_put_when_it_stands(network):
    # Mean horizontal speed of heels and toes, units/s: the original network's is 5.4 while it
    # settles at the start and 1.3 after the jog; a network whose standing contacts hover about
    # the IK's lock threshold creeps at 10 to 13.
    # Only after a stop: from its first frame (the mean pose) the shipped network shuffles its
    # feet for about a second before it stands (docs/evaluation.md).
    recording, spans = _play(network, "jog_and_stop")
    for label in ("stop",):
        feet = recording["joint_positions"][spans[label]][:, [4, 5, 9, 10]][:, :, [0, 2]].astype(np.float64)
        speed = np.linalg.norm(np.diff(feet, axis=0), axis=-1) * 60
        assert speed.mean() < 6.0, (label, speed.mean(axis=0))
