"""Rollout training: runs of consecutive windows played on the network's own poses."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pfnn_demo.motion.bvh import read_bvh
from pfnn_demo.sim.features import FUTURE_SAMPLES, INPUT, OUTPUT, SAMPLES, STAND
from pfnn_demo.sim.rotation import rotate_y
from pfnn_demo.tools.train.database import clip_from_motion, clip_windows, normalisation
from pfnn_demo.tools.train.rollout import (frame_changes, sequence_starts, stopping_starts, strafing_starts,
                                           turning_starts)

from conftest import REPO


@pytest.fixture(scope="module")
def turning_windows():
    """Windows of a captured walk that turns round (CMU 16_27)."""
    return clip_windows(clip_from_motion(read_bvh(REPO / "data" / "cmu" / "16_27.bvh"), "turn"))


def test_runs_never_cross_from_one_clip_into_the_next():
    follows = np.ones(40, bool)
    follows[[0, 12, 13, 30]] = False         # clips start at rows 0, 12, 13 and 30
    starts = sequence_starts(follows, 5)
    runs = starts[:, None] + np.arange(5)
    assert len(starts) and np.all(follows[runs])
    # every row from which 5 rows follow their predecessors is a start
    assert set(starts) == {s for s in range(36) if follows[s:s + 5].all()}
    assert len(sequence_starts(follows, 41)) == 0


def test_the_turning_runs_are_those_through_the_captured_turn(turning_windows):
    """The runs drawn for turning (--rollout-turns) lie over the frames where the captured walk
    turns round, and none of them starts on the straight."""
    X, Y, _ = turning_windows
    follows = np.ones(len(X), bool)
    follows[0] = False
    starts = sequence_starts(follows, 30)
    chosen = turning_starts(Y, starts, 30, share=0.1)
    assert len(chosen) == round(0.1 * len(starts)) and set(chosen) <= set(starts)
    turning = np.abs(Y[:, OUTPUT["root_turn"]][:, 0])
    run_turn = {s: turning[s:s + 30].sum() for s in starts}
    # every chosen run turns further than every run left out
    assert min(run_turn[s] for s in chosen) >= max(run_turn[s] for s in set(starts) - set(chosen))
    # and the frame where the walk turns fastest lies in every one of them
    fastest = int(np.argmax(turning))
    assert all(s <= fastest < s + 30 for s in chosen)
    assert np.mean([run_turn[s] for s in chosen]) > 1.5 * np.mean(list(run_turn.values()))
    assert len(turning_starts(Y, starts[:0], 30)) == 0


@pytest.mark.parametrize("off_facing", [(1.0, 0.0), (0.0, -1.0)], ids=["sideways", "backwards"])
def test_the_strafing_runs_are_those_through_the_steps_off_the_facing(off_facing):
    """The runs drawn for strafing (--rollout-strafes) lie over the frames that move off the
    facing, at the same speed as the walk ahead around them: walking ahead counts nothing."""
    Y = np.zeros((600, OUTPUT["root_velocity"].stop), np.float32)
    Y[:, OUTPUT["root_velocity"]] = (0.0, 2.0)                 # ahead, 2 units a frame
    Y[200:260, OUTPUT["root_velocity"]] = 2.0 * np.array(off_facing)
    starts = sequence_starts(np.r_[False, np.ones(599, bool)], 30)
    chosen = strafing_starts(Y, starts, 30, share=0.1)
    assert len(chosen) == round(0.1 * len(starts))
    assert all(s + 30 > 200 and s < 260 for s in chosen)       # every one steps off the facing


def test_a_walk_backwards_moves_further_off_the_facing_than_a_side_step():
    """A side-step and a walk backwards as long and as fast: the furthest run is the walk backwards."""
    Y = np.zeros((600, OUTPUT["root_velocity"].stop), np.float32)
    Y[:, OUTPUT["root_velocity"]] = (0.0, 2.0)
    Y[100:130, OUTPUT["root_velocity"]] = (2.0, 0.0)
    Y[400:430, OUTPUT["root_velocity"]] = (0.0, -2.0)
    starts = sequence_starts(np.r_[False, np.ones(599, bool)], 30)
    assert list(strafing_starts(Y, starts, 30, share=1 / len(starts))) == [400]


def test_the_stopping_runs_are_those_coming_to_a_stand():
    """The runs drawn for stops (--rollout-stops) lie over the frames where the stand gait now
    rises (a walk stopping), none over the walk setting off again, nor across the start of the
    next clip."""
    now_stand = INPUT["gaits"].start + SAMPLES * STAND + SAMPLES - FUTURE_SAMPLES
    X = np.zeros((600, INPUT["gaits"].stop), np.float32)
    X[:300, now_stand] = 0.2                                 # a slow walk
    X[300:330, now_stand] = np.linspace(0.2, 1.0, 30)       # stops
    X[330:450, now_stand] = 1.0                              # stands
    X[450:480, now_stand] = np.linspace(1.0, 0.0, 30)       # and sets off again
    X[520:, now_stand] = 1.0        # a standing clip from row 520: no rise from the clip before
    follows = np.ones(600, bool)
    follows[[0, 520]] = False
    starts = sequence_starts(follows, 30)
    chosen = stopping_starts(X, starts, 30, share=0.1)
    assert len(chosen) == round(0.1 * len(starts))
    assert all(s + 30 > 300 and s < 330 for s in chosen)       # every one through the stop
    assert list(stopping_starts(X, starts, 30, share=1 / len(starts))) == [300]


def test_the_previous_pose_carried_into_the_output_frame_meets_the_captured_pose(turning_windows):
    """What rollouts feed back rests on this: the previous-pose frame of a window, moved and
    turned by the root motion of the window before, is its output frame. On a turning walk, the
    previous pose carried over plus its last step (turned with the root) is the captured pose."""
    torch = pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.tools.train.rollout import to_output_frame

    X, Y, _ = turning_windows
    turn, step, rise = frame_changes(X, Y)
    assert np.abs(turn).max() > 0.01                     # the root does turn
    previous = X[:, INPUT["joint_positions"]].reshape(len(X), -1, 3)
    last_step = X[:, INPUT["joint_velocities"]].reshape(len(X), -1, 3)
    captured = Y[:, OUTPUT["joint_positions"]].reshape(len(X), -1, 3)
    carried = to_output_frame(torch, torch.as_tensor(previous), torch.as_tensor(step), torch.as_tensor(turn)).numpy()
    error = np.abs(captured[1:] - carried[1:] - rotate_y(last_step[1:], turn[1:, None]))
    assert error.max() < 1e-3 * np.abs(captured).max(), error.max()
    # Without the turn the carried pose misses by far more: the test sees the rotation.
    unturned = to_output_frame(torch, torch.as_tensor(previous), torch.as_tensor(step), torch.zeros(len(X))).numpy()
    assert np.abs(captured[1:] - unturned[1:] - last_step[1:]).max() > 20 * error.max()
    # From one output frame to the next previous-pose frame only the root's height changes.
    offset = previous[1:] - captured[:-1]
    assert np.allclose(offset, rise[1:, None, None] * np.array([0.0, 1.0, 0.0]), atol=1e-4)


def test_a_rollout_of_one_frame_is_the_ordinary_loss_and_longer_runs_train(turning_windows):
    torch = pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.tools.train.rollout import Rollouts
    from pfnn_demo.tools.train.trainer import GATE_INPUTS, build_mann_model, recipe, train

    X, Y, P = turning_windows
    norm = normalisation(X, Y)
    follows = np.arange(len(X)) > 0
    config = recipe("mann", hidden=16, epochs=2, batch_size=16, experts=3, seed=5, rollout_frames=8, rollout_rate=2e-3,
                    rollout_updates=150)
    torch.manual_seed(1)
    model = build_mann_model(torch, X.shape[1], Y.shape[1], config, GATE_INPUTS["mann"](X.shape[1])).eval()
    Xn = torch.as_tensor((X - norm[0]) / norm[1], dtype=torch.float32)
    Yn = torch.as_tensor((Y - norm[2]) / norm[3], dtype=torch.float32)
    Pt = torch.as_tensor(P)
    rows = np.arange(1, len(X), 7)
    with torch.no_grad():
        one = Rollouts(torch, X, Y, follows, norm, 1, "cpu").loss(torch, model, Xn, Yn, Pt, rows, None)
        one_fed_back = Rollouts(torch, X, Y, follows, norm, 1, "cpu", trajectory=True).loss(torch, model, Xn, Yn, Pt,
                                                                                            rows, None)
        plain = torch.mean((model(Xn[rows]) - Yn[rows]) ** 2)
    assert abs(float(one) - float(plain)) < 1e-5 * float(plain)
    assert float(one_fed_back) == float(one)     # a run's first window is as captured, trajectory and all

    rollouts = Rollouts(torch, X, Y, follows, norm, 8, "cpu")
    losses = []
    for frames in (1, 8, 8):     # as many updates, on single windows or on runs
        trained, history = train(X, Y, P, norm, dataclasses.replace(config, rollout_frames=frames), progress=False,
                                 log=lambda text: None, follows=follows)
        with torch.no_grad():
            losses.append(float(rollouts.loss(torch, trained.eval(), Xn, Yn, Pt, rollouts.starts[::3], None)))
    assert np.isfinite(history[-1]["rollout_loss"])
    # Trained on its own poses, the network plays on from them better; bit for bit again.
    assert losses[1] < losses[0] and losses[1] == losses[2], losses
    with torch.no_grad():
        # Eased all the way, the carried blend is the gate's own; eased less, the run plays otherwise
        # (its first window is still the gate's).
        runs = {ease: float(Rollouts(torch, X, Y, follows, norm, 8, "cpu", ease=ease).loss(
            torch, trained, Xn, Yn, Pt, rollouts.starts[::3], None)) for ease in (None, 1.0, 0.2)}
        first = Rollouts(torch, X, Y, follows, norm, 1, "cpu", ease=0.2).loss(torch, trained, Xn, Yn, Pt, rows, None)
        plain = torch.mean((trained(Xn[rows]) - Yn[rows]) ** 2)
    assert abs(runs[1.0] - runs[None]) < 1e-5 * runs[None] and abs(runs[0.2] - runs[None]) > 1e-3 * runs[None], runs
    assert abs(float(first) - float(plain)) < 1e-5 * float(plain)


def test_a_fed_back_future_is_the_captured_one_when_predicted_right_and_leans_toward_a_wrong_one(turning_windows):
    """Fed back as play does it: the predicted future, bent toward the captured future by the
    predictor's shares. A prediction of the captured future gives the captured inputs back; one
    that drifts sideways moves the next inputs by the share the predictor keeps."""
    torch = pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.tools.train.rollout import NOW, PATH, Rollouts, kept_shares
    from pfnn_demo.sim.trajectory import BIAS_POSITION

    X, Y, _ = turning_windows
    norm = normalisation(X, Y)
    rollouts = Rollouts(torch, X, Y, np.arange(len(X)) > 0, norm, 4, "cpu", trajectory=True)
    rows = np.arange(1, len(X) - 1, 5)
    captured = torch.as_tensor(np.stack([X[rows + 1, INPUT[name]][:, NOW:] for name in PATH], axis=1))

    def fed_back(outputs):
        prediction = torch.as_tensor((outputs - norm[2]) / norm[3], dtype=torch.float32)
        return rollouts.fed_back_future(torch, prediction, captured).numpy()

    right = fed_back(Y[rows])
    assert np.abs(captured.numpy()).max() > 20.0              # the future reaches well ahead
    assert np.allclose(right, captured.numpy(), atol=1e-2)
    drifting = Y[rows].copy()
    drifting[:, OUTPUT["future_x"].start + 1:OUTPUT["future_x"].stop] += 10.0
    moved = fed_back(drifting) - captured.numpy()
    kept = kept_shares(BIAS_POSITION, True)[0]
    assert 0.5 < kept < 1.0
    assert np.allclose(moved[:, 0, 1:], 10.0 * kept, atol=1e-2)     # x leans by the share kept
    assert np.allclose(moved[:, 1:], 0.0, atol=1e-2)                # z and the directions do not move


def test_a_fed_back_manifold_moves_on_as_the_deepphase_runtime_moves_it(turning_windows):
    """A DeepPhase controller's rollouts feed its phase manifold back as play does: the next
    window's manifold inputs at now and the future samples are those `advance_manifold` gives,
    from any current manifold and prediction, moving or standing."""
    torch = pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.sim import deepphase
    from pfnn_demo.tools.train.rollout import Rollouts

    X, Y, _ = turning_windows
    channels, count = 3, 40
    rng = np.random.default_rng(4)
    extra_in = rng.normal(size=(len(X), deepphase.phase_input_size(channels))).astype(np.float32)
    extra_out = rng.normal(size=(len(Y), deepphase.phase_output_size(channels))).astype(np.float32)
    X, Y = np.concatenate([X, extra_in], axis=1), np.concatenate([Y, extra_out], axis=1)
    norm = normalisation(X, Y, deepphase.output_groups(channels))
    rollouts = Rollouts(torch, X, Y, np.arange(len(X)) > 0, norm, 4, "cpu", channels=channels)

    manifold = np.zeros((count, deepphase.MANIFOLD_FRAMES, channels, 3), np.float32)
    manifold[..., deepphase.PHASE] = rng.uniform(0, 1, manifold.shape[:-1])
    manifold[..., deepphase.AMPLITUDE] = rng.uniform(0.1, 2, manifold.shape[:-1])
    predicted = {"vectors": rng.normal(size=(count, 6, channels, 2)).astype(np.float32),
                 "amplitude": rng.uniform(-0.2, 2, (count, 6, channels)).astype(np.float32),
                 "frequency": rng.uniform(-0.5, 3, (count, 6, channels)).astype(np.float32)}
    predicted["vectors"][0, 0, 0] = 0.0         # no predicted direction: the turned phase stands
    moving = rng.uniform(0, 1, count).astype(np.float32)
    current = deepphase.phase_vectors(manifold[:, deepphase.NOW:, :, deepphase.PHASE],
                                      manifold[:, deepphase.NOW:, :, deepphase.AMPLITUDE])
    outputs = np.zeros((count, Y.shape[1]), np.float32)
    outputs[:, Y.shape[1] - extra_out.shape[1]:] = deepphase.phase_output(
        predicted["vectors"], predicted["amplitude"], predicted["frequency"])
    prediction = torch.as_tensor((outputs - norm[2]) / norm[3], dtype=torch.float32)
    fed = rollouts.fed_back_manifold(torch, prediction, torch.as_tensor(current), torch.as_tensor(moving)).numpy()

    deepphase.advance_manifold(manifold, predicted, moving)
    expected = deepphase.phase_vectors(manifold[:, deepphase.NOW:, :, deepphase.PHASE],
                                       manifold[:, deepphase.NOW:, :, deepphase.AMPLITUDE])
    assert np.abs(expected - current).max() > 0.5            # the manifold moved
    assert np.allclose(fed, expected, atol=1e-4)


def test_a_share_of_each_updates_runs_is_drawn_through_the_turns():
    """--rollout-turns: that share of an update's runs starts among the turning runs, the rest
    among all; with none asked, the draws are those of the runs drawn alike."""
    import types

    from pfnn_demo.tools.train.trainer import drawn_starts, recipe

    rollouts = types.SimpleNamespace(starts=np.arange(1000), turning=np.arange(900, 1000), strafing=np.arange(10))
    config = recipe("mann", rollout_turns=0.5, rollout_sequences=16)
    drawn = np.concatenate([drawn_starts(rollouts, config, np.random.default_rng(seed)) for seed in range(50)])
    assert len(drawn) == 50 * 16
    # 8 of 16 from the turning tenth, and about a tenth of the other 8 by chance
    share = np.mean(drawn >= 900)
    assert 0.5 < share < 0.62, share
    alike = drawn_starts(rollouts, recipe("mann"), np.random.default_rng(3))
    assert np.array_equal(alike, rollouts.starts[np.random.default_rng(3).integers(0, 1000, 16)])


def test_the_strafing_share_of_each_updates_runs_comes_beside_the_turning_share(tmp_path, capsys):
    """--rollout-strafes with --rollout-turns: each share of an update's runs from its own pool,
    the rest from all; together they may not ask for more than every run."""
    import types

    from pfnn_demo.tools.train.trainer import drawn_starts, recipe

    rollouts = types.SimpleNamespace(starts=np.arange(1000), turning=np.arange(900, 950),
                                     strafing=np.arange(950, 1000), stopping=np.arange(800, 850))
    config = recipe("mann", rollout_turns=0.25, rollout_strafes=0.5, rollout_sequences=16)
    drawn = np.stack([drawn_starts(rollouts, config, np.random.default_rng(seed)) for seed in range(50)])
    assert drawn.shape == (50, 16)
    assert np.all((drawn[:, :4] >= 900) & (drawn[:, :4] < 950))     # 4 through the turns
    assert np.all(drawn[:, 4:12] >= 950)                             # 8 off the facing
    assert 0.0 < np.mean(drawn[:, 12:] < 900)                        # the rest from all
    # --rollout-stops: its share from its own pool, after the turns' and the strafes'
    config = recipe("mann", rollout_turns=0.25, rollout_strafes=0.25, rollout_stops=0.25, rollout_sequences=16)
    drawn = np.stack([drawn_starts(rollouts, config, np.random.default_rng(seed)) for seed in range(50)])
    assert np.all((drawn[:, 8:12] >= 800) & (drawn[:, 8:12] < 850))  # 4 coming to a stand

    pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.tools.cli import main

    for shares in (["--rollout-turns", "0.6", "--rollout-strafes", "0.6"],
                   ["--rollout-turns", "0.5", "--rollout-strafes", "0.25", "--rollout-stops", "0.5"]):
        assert main(["train", "--model", "mann", "--data", str(REPO / "data"), *shares,
                     "--out", str(tmp_path / "out.npz")]) == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and "at most 1" in error[0], error
        assert not (tmp_path / "out.npz").exists()
