"""The drawn pose does not snap: in a long crouch walk and in strafing, no drawn knee jumps off its
path harder than captured knees ever do, with the shipped network and with the original."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from pfnn_demo.resources import default_network_path
from pfnn_demo.motion.bvh import read_bvh
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
from pfnn_demo.sim.input_script import InputScript, example_scripts
from pfnn_demo.sim.scene import load_scene
from pfnn_demo.sim.skeleton import BVH_TO_DEMO_UNITS, LEFT_LEG, RIGHT_LEG
from pfnn_demo.sim.weights import load_weights
from pfnn_demo.tools.evaluation import record

from conftest import REPO

KNEES = [LEFT_LEG["knee"], RIGHT_LEG["knee"]]
# A drawn knee may jerk this many times harder than the hardest captured knee: networks are
# noisier than capture, but a knee swinging round (the snap this guards against) is ten times.
HEADROOM = 2.0


def _knee_jumps(positions: np.ndarray) -> np.ndarray:
    """(T-2,) largest second difference (units) of either knee, frame by frame."""
    knees = np.asarray(positions, np.float64)[:, KNEES]
    return np.linalg.norm(np.diff(knees, n=2, axis=0), axis=-1).max(axis=1)


@lru_cache(maxsize=1)
def captured_knee_jump() -> float:
    """The largest second difference of a knee in the captured clips of data/cmu, at 60 fps."""
    worst = 0.0
    for path in sorted((REPO / "data" / "cmu").glob("*.bvh")):
        motion = read_bvh(path)
        step = max(1, round(1 / 60 / motion.frame_time))
        worst = max(worst, float(_knee_jumps(motion.global_transforms(BVH_TO_DEMO_UNITS)[::step, :, :3, 3]).max()))
    return worst


@pytest.fixture(scope="module", params=["shipped", "original"])
def network(request):
    if request.param == "shipped":
        return PhaseFunctionedNetwork(load_weights(default_network_path()), "cubic")
    return PhaseFunctionedNetwork(request.getfixturevalue("original_weights"), "cubic")


@pytest.mark.parametrize("script", ["crouch_walk", "strafe_long"])
def test_no_drawn_knee_snaps_in_a_crouch_walk_or_strafing(network, script):
    bound = HEADROOM * captured_knee_jump()
    assert 2.0 < bound < 20.0, bound          # the capture's knees: a few units at most
    played = InputScript.load(example_scripts()[script])
    recording = record(network, load_scene(played.scene or "plaza"), played)
    assert float(recording["completed"]) == 1.0
    jumps = _knee_jumps(recording["joint_positions"])
    assert jumps.max() <= bound, (f"frame {int(jumps.argmax()) + 1}: a knee jumped {jumps.max():.1f} units "
                                  f"(bound {bound:.1f})")


def _feet_switching_ik_off(network, fade_frames: int, monkeypatch) -> tuple[np.ndarray, list[float]]:
    """Drawn feet (frames, 4, 3) of a walk whose foot IK is switched off after 3 s, and the IK's
    weight on each tick."""
    from pfnn_demo.sim import crowd as crowd_module
    from pfnn_demo.sim.controller import Controller

    monkeypatch.setattr(crowd_module, "IK_FADE_FRAMES", fade_frames)
    played = InputScript.from_dict({"segments": [{"duration": 3.0, "move": [0, 1], "ik": True},
                                                 {"duration": 1.0, "move": [0, 1], "ik": False}]})
    controller = Controller(network, load_scene("hills"))
    feet, weights = [], []
    for frame in range(played.frames):
        controller.step(played.state(frame))
        feet.append(controller.joint_positions_final[[4, 5, 9, 10]].copy())
        weights.append(float(controller.crowd.ik_weight[0]))
    return np.array(feet, np.float64), weights


def test_switching_foot_ik_off_fades_it_out_instead_of_moving_the_feet_at_once(monkeypatch):
    from pfnn_demo.sim.crowd import IK_FADE_FRAMES

    network = PhaseFunctionedNetwork(load_weights(default_network_path()), "cubic")
    feet, weights = _feet_switching_ik_off(network, IK_FADE_FRAMES, monkeypatch)
    switch = 180
    assert weights[switch - 1] == 1.0 and weights[switch + IK_FADE_FRAMES - 1] == 0.0
    assert 0.0 < weights[switch + IK_FADE_FRAMES // 2] < 1.0
    jumps = np.linalg.norm(np.diff(feet, n=2, axis=0), axis=-1).max(axis=1)
    at_once, _ = _feet_switching_ik_off(network, 1, monkeypatch)
    at_once_jumps = np.linalg.norm(np.diff(at_once, n=2, axis=0), axis=-1).max(axis=1)
    around = slice(switch - 2, switch + IK_FADE_FRAMES + 2)
    assert jumps[around].max() < 0.5 * at_once_jumps[around].max(), (jumps[around].max(), at_once_jumps[around].max())
