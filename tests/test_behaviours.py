"""What a player sees, network by network: standing still after a stop, setting off and stopping
on planted feet, quick sharp turns, jumping the bars, climbing the terraces, bones that keep
their length. Each behaviour has its own example script in scripts/; the original network is
held to the same bars wherever the behaviour is one it has (it needs ../shared)."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.resources import default_network_path
from pfnn_demo.sim.bone_lengths import bone_length_deviation
from pfnn_demo.sim.input_script import InputScript
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
from pfnn_demo.sim.scene import load_scene
from pfnn_demo.sim.weights import NetworkWeights, load_npz
from pfnn_demo.tools.evaluation import record, standing_foot_speed, turn_time

from conftest import require_shared

FPS = 60
_networks: dict[str, PhaseFunctionedNetwork] = {}


def network(name: str) -> PhaseFunctionedNetwork:
    if name not in _networks:
        if name == "shipped":
            weights = load_npz(default_network_path())
        else:
            weights = NetworkWeights(**np.load(require_shared("reference/pfnn_original/control_points.npz")))
        _networks[name] = PhaseFunctionedNetwork(weights, "cubic")
    return _networks[name]


_recordings: dict = {}


def play(name: str, script_name: str):
    """The recording of a shipped example script (in its own scene) and its segments' frames."""
    if (name, script_name) not in _recordings:
        script = InputScript.load(script_name)
        scene = load_scene(script.scene or "plaza")
        recording = record(network(name), scene, script)
        assert float(recording["completed"]) == 1.0, f"{name} failed in {script_name}"
        spans, start = {}, 0
        for segment in script.segments:
            spans.setdefault(segment.label, []).append(slice(start, start + segment.frames))
            start += segment.frames
        _recordings[name, script_name] = (recording, spans, scene)
    return _recordings[name, script_name]


BOTH = ["shipped", "original"]


def foot_speed(recording, span) -> np.ndarray:
    """(frames - 1, 4) speed (units/s) of the drawn heels and toes."""
    feet = recording["joint_positions"][span][:, [4, 5, 9, 10]].astype(np.float64)
    return np.linalg.norm(np.diff(feet, axis=0), axis=-1) * FPS


@pytest.mark.parametrize("name", BOTH)
def test_stopping_from_a_walk_or_a_jog_settles_into_a_standing_pose(name):
    # Measured from 1.5 s after the release: the original network needs that long (from 1 s its
    # feet still move at 1.1 to 2.3 units/s). The shipped network's stop after the walking curve
    # (the second "stop and stand") settles more slowly, and standing it does not breathe (its
    # upper body is still): docs/evaluation.md.
    recording, spans, _ = play(name, "stop_and_go")
    for label in ("stop from a walk and stand", "stop from a jog and stand"):
        span = spans[label][0]
        settled = slice(span.start + int(1.5 * FPS), span.stop)
        speed = foot_speed(recording, settled)
        assert speed.mean() <= 1.5, (label, speed.mean(axis=0))
        contacts = recording["contacts"][settled] > 0.5
        assert np.all(contacts[:, :2].any(axis=1) & contacts[:, 2:].any(axis=1)), (label, contacts.mean(axis=0))


@pytest.mark.parametrize("script", ["stop_and_go", "sharp_turns", "terraces"])
def test_shipped_feet_stand_still_from_a_second_after_every_release(script):
    # The quality bar (eval's "standing feet"): 1 unit/s, after stops, sharp turns and reversals
    # and on the steps. The original network misses it after its turns (2.8 to 3.3 units/s).
    recording, _, _ = play("shipped", script)
    assert standing_foot_speed(recording) <= 1.0


@pytest.mark.parametrize("name", BOTH)
def test_sharp_turns_are_quick(name):
    recording, spans, _ = play(name, "sharp_turns")
    # The original turns round in 1.08 s, the shipped network in 1.14 s (docs/evaluation.md).
    assert turn_time(recording) < 2.0
    direction = recording["root_direction"][:, [0, 2]]
    for label in ("turn 90 right", "jog, turn 90 left"):
        span = spans[label][0]
        before, after = direction[span.start - 1], direction[span.start + int(1.2 * FPS)]
        assert abs(np.dot(before, after)) < 0.35, (label, np.dot(before, after))   # turned ~90 within 1.2 s


@pytest.mark.parametrize("name", BOTH)
def test_it_jumps_the_bars_with_feet_clearing_them(name):
    recording, spans, scene = play(name, "jump_bars")
    terrain = scene.heightmap
    root = recording["root_position"]
    assert root[:, 2].min() < -500, "it never got past the bar"
    gait = recording["gait"]
    jumping = gait[:, 4] > 0.9
    assert jumping.any()
    # The feet over a bar, against its sloped edge: the original network's drawn feet (after foot
    # IK) dip up to 8 units into it (raw 9.3), on 72 % of the frames with a foot over the bar; the
    # shipped network, trained on jumps over bars, keeps every foot within 0.8 units of its surface
    # (its feet, pitched onto slopes in training, reach down onto the bar's falling edge; the
    # network before, trained with level feet, kept 1.3 units above it), so it is held to 1 unit.
    feet = recording["joint_positions"][:, [4, 5, 9, 10]].astype(np.float64)
    ground = terrain.sample(feet[..., 0], feet[..., 2])
    over_bar = ground > 5.0
    assert over_bar.any(), "no foot ever passed over a bar"
    if name == "shipped":
        assert (feet[..., 1] - ground)[over_bar].min() > -1.0
    # and they rise for the jump: a foot clears the height of the bar with room to spare
    bar = float(terrain.sample(np.array([10.23]), np.array([-422.82]))[0])
    assert feet[jumping][..., 1].max() > bar + 5.0, (feet[jumping][..., 1].max(), bar)


@pytest.mark.parametrize("name", BOTH)
def test_it_climbs_the_terraces_without_feet_sinking(name):
    recording, spans, scene = play(name, "terraces")
    terrain = scene.heightmap
    root = recording["root_position"]
    heights = terrain.sample(root[:, 0], root[:, 2])
    assert heights.max() - heights.min() > 20, "it did not cross several terraces (12 units apart)"
    feet = recording["joint_positions"][:, [4, 5, 9, 10]].astype(np.float64)
    sink = feet[..., 1] - terrain.sample(feet[..., 0], feet[..., 2])
    # The shipped network's feet sink at most 2.2 units; the original's 4.4 (a toe at a ramp).
    assert sink.min() > (-3.0 if name == "shipped" else -5.0), sink.min()


@pytest.mark.parametrize("name", BOTH)
@pytest.mark.parametrize("script", ["stop_and_go", "sharp_turns", "strafe"])
def test_drawn_bones_keep_their_length(name, script):
    recording, _, _ = play(name, script)
    assert bone_length_deviation(recording["joint_positions"].astype(np.float64)).max() < 0.02


@pytest.mark.parametrize("name, stick", [("shipped", 0.57), ("shipped", 1.0), ("original", 1.0)])
def test_pushed_at_once_from_the_start_it_walks_forwards(name, stick):
    # From its mean pose, pushed at once, the shipped network set off walking backwards or
    # sideways and kept on; it starts from its settled standing pose instead (Crowd start_pose).
    # The original network, pushed half-way, walks off backwards at 60 units/s even so (its
    # travel is 120 degrees from its facing): a behaviour it does not have.
    from pfnn_demo.sim.controller import Controller
    from pfnn_demo.sim.input_state import InputState

    controller = Controller(network(name), load_scene("plaza"))
    roots = []
    for _ in range(300):
        controller.step(InputState(move_x=-stick))
        roots.append(np.array(controller.root_position))
    travel = (roots[-1] - roots[-120])[[0, 2]]
    facing = np.array(controller.root_direction)[[0, 2]]
    assert np.linalg.norm(travel) / 2.0 > 60.0                     # walking, over the last 2 s
    assert np.dot(travel, facing) / np.linalg.norm(travel) / np.linalg.norm(facing) > 0.9
