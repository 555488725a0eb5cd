"""Training pipeline: automatic labels against hand labels, the window layout, a smoke training."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.sim.features import INPUT, OUTPUT
from pfnn_demo.motion.bvh import read_bvh
from pfnn_demo.sim.skeleton import BVH_TO_DEMO_UNITS
from pfnn_demo.tools.train import labels
from pfnn_demo.tools.train.database import clip_from_motion, clip_windows, mirror_clip

from conftest import require_shared


def test_automatic_phase_and_strikes_match_the_hand_labels():
    folder = require_shared("reference/pfnn_clip")
    motion = read_bvh(folder / "LocomotionFlat04_000.bvh")
    positions = motion.global_transforms(BVH_TO_DEMO_UNITS)[:, :, :3, 3]
    fps = 1 / motion.frame_time
    contacts = labels.foot_contacts(positions, fps)
    strikes = labels.foot_strikes(contacts, fps)
    phase = labels.phase_from_strikes(strikes, len(positions), fps)
    hand = np.loadtxt(folder / "LocomotionFlat04_000.phase")
    steps = [line.split() for line in (folder / "LocomotionFlat04_000_footsteps.txt").read_text().splitlines()]
    first, last = int(steps[0][0]), int(steps[-1][0])
    error = labels.circular_error(phase, hand)[first:last]
    # Measured: mean 0.051, median 0.038 cycles over the labelled footsteps.
    assert error.mean() < 0.06 and np.median(error) < 0.05, (error.mean(), np.median(error))
    # Strike agreement: most hand-labelled right-foot strikes have one of ours within 0.1 s.
    ours = np.array([frame for frame, value in strikes if value == 0.0])
    theirs = np.array([int(s[0]) for s in steps])
    near = [np.min(np.abs(ours - t)) <= 0.1 * fps for t in theirs]
    assert np.mean(near) >= 0.9, np.mean(near)      # measured 0.95


@pytest.fixture(scope="module")
def walk_clip():
    return clip_from_motion(read_bvh(require_shared("data/cmu/02_01.bvh")), "02_01")


def test_walk_clip_labels_are_plausible(walk_clip):
    assert walk_clip.frames == pytest.approx(171, abs=1)
    assert walk_clip.gaits[:, 1].mean() > 0.8                     # walking
    steps = np.mod(np.diff(walk_clip.phase), 1.0)
    assert 0.008 < np.median(steps) < 0.03                          # about one cycle a second
    assert 0.2 < walk_clip.contacts.mean() < 0.7


def test_windows_use_the_runtime_layout(walk_clip):
    X, Y, P = clip_windows(walk_clip)
    assert X.shape == (walk_clip.frames - 121, 342) and Y.shape == (len(X), 311) and P.shape == (len(X),)
    # The current frame is the trajectory's origin, facing +Z.
    np.testing.assert_allclose(X[:, INPUT["trajectory_x"]][:, 6], 0, atol=1e-4)
    np.testing.assert_allclose(X[:, INPUT["direction_z"]][:, 6], 1, atol=1e-4)
    # What the network outputs as this frame's pose is what it gets back as the previous pose
    # next frame (on flat ground, where both frames share the root height).
    np.testing.assert_allclose(X[1:, INPUT["joint_positions"]], Y[:-1, OUTPUT["joint_positions"]], atol=1e-3)
    # Walking forward: the root moves along +Z of its own frame, about 2 units a frame.
    assert 1.0 < np.median(Y[:, OUTPUT["root_velocity"]][:, 1]) < 3.5
    hips_height = Y[:, OUTPUT["joint_positions"]][:, 1]
    assert 80 < np.median(hips_height) < 105


def test_mirroring_twice_is_the_identity(walk_clip):
    twice = mirror_clip(mirror_clip(walk_clip))
    np.testing.assert_allclose(twice.positions, walk_clip.positions, atol=1e-5)
    np.testing.assert_allclose(twice.rotations, walk_clip.rotations, atol=1e-5)
    once = mirror_clip(walk_clip)
    # The left foot of the mirror is where the right foot was, reflected.
    np.testing.assert_allclose(once.positions[:, 4, 0], -walk_clip.positions[:, 9, 0], atol=1e-5)


def test_smoke_training_lowers_the_loss_and_the_export_runs(tmp_path):
    """A tiny network on one short clip from the repository (no reference data needed)."""
    pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from conftest import REPO
    from pfnn_demo.motion.deepmimic import load_deepmimic

    walk_clip = clip_from_motion(load_deepmimic(REPO / "data" / "motions" / "humanoid3d_walk.txt", 4.0), "walk")
    from pfnn_demo.sim.controller import Controller
    from pfnn_demo.sim.headless import simulate
    from pfnn_demo.sim.input_script import InputScript
    from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
    from pfnn_demo.sim.scene import load_scene
    from pfnn_demo.tools.train.database import normalisation
    from pfnn_demo.tools.train.trainer import TrainConfig, export, train
    from pfnn_demo.sim.weights import load_npz

    parts = [clip_windows(c) for c in (walk_clip, mirror_clip(walk_clip))]
    X, Y, P = (np.concatenate([p[k] for p in parts]) for k in range(3))
    norm = normalisation(X, Y)
    config = TrainConfig(hidden=32, epochs=6, batch_size=8, learning_rate=1e-3, seed=1)
    model, history = train(X, Y, P, norm, config, progress=False, log=lambda text: None)
    assert history[-1]["train_loss"] < 0.8 * history[0]["train_loss"], history
    export(model, norm, tmp_path / "tiny.npz", "smoke test")
    network = PhaseFunctionedNetwork(load_npz(tmp_path / "tiny.npz"), "cubic")
    assert network.weights.hidden_sizes == (32, 32)
    controller = Controller(network, load_scene("plaza"))
    _, failure = simulate(controller, InputScript.load("walk_circle"), 60)
    assert failure is None and np.all(np.isfinite(controller.joint_positions_final))


def test_looping_bending_and_warping_keep_the_motion_consistent(walk_clip):
    from pfnn_demo.tools.train.database import facing_yaw
    from pfnn_demo.tools.train.synthesis import bend, loop_cycles, time_warp

    looped = loop_cycles(walk_clip, 8.0)
    assert looped.frames >= 8 * 60
    # Seams are smooth: no joint jumps much more than it moves anywhere inside a cycle.
    step = np.linalg.norm(np.diff(looped.positions, axis=0), axis=-1).max(axis=1)
    assert step.max() < 2.0 * np.percentile(step, 99)
    # The phase runs on: about one cycle a second with no jumps backwards besides the wrap.
    dphase = np.mod(np.diff(looped.phase), 1.0)
    assert np.all(dphase < 0.1)
    turned = bend(looped, 1.0)
    yaw = np.unwrap(facing_yaw(turned.positions.astype(np.float64)))
    straight = np.unwrap(facing_yaw(looped.positions.astype(np.float64)))
    rate = ((yaw[-1] - yaw[0]) - (straight[-1] - straight[0])) / (looped.frames / 60)
    assert rate == pytest.approx(1.0, abs=0.1)
    fast = time_warp(looped, 1.25)
    speed = lambda c: np.linalg.norm(np.diff(c.positions[:, 0, [0, 2]], axis=0), axis=1).mean()  # noqa: E731
    assert speed(fast) == pytest.approx(1.25 * speed(looped), rel=0.05)


def test_eval_compares_networks(tmp_path, capsys, original_network_path):
    from pfnn_demo.tools.cli import main
    from pfnn_demo.resources import default_network_path

    assert main(["eval", "--network", str(original_network_path), "--network", str(default_network_path()),
                 "--script", "turn_180", "--plots", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| turn_180 | foot skate |" in out and "| turn_180 | turn time |" in out
    row = next(line for line in out.splitlines() if "| turn_180 | turn time |" in line)
    original_turn = float(row.split("|")[3])
    assert 0.3 < original_turn < 1.5          # the original follows a reversal within 1.5 s
    assert len(list(tmp_path.glob("*.png"))) == 8
    assert "| turn_180 | completed | 1.00 | 1.00 |" in out
