"""The command line: help, clear errors, weight conversion, headless runs and their recordings."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from pfnn_demo.motion.bvh import read_bvh
from pfnn_demo.sim.bone_lengths import keep_bone_lengths
from pfnn_demo.sim.features import INPUT
import pytest

from pfnn_demo.tools.cli import main
from pfnn_demo.sim.controller import Controller
from pfnn_demo.errors import NetworkOutputError
from pfnn_demo.sim.headless import simulate
from pfnn_demo.sim.input_script import InputScript
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
from pfnn_demo.sim.recording import Recorder
from pfnn_demo.sim.scene import load_scene
from pfnn_demo.sim.weights import load_npz, save_npz, save_original_folder

from conftest import make_random_weights

RECORDING_KEYS = {"fps": (), "root_position": (3,), "root_direction": (3,), "joint_positions": (31, 3),
                  "joint_positions_raw": (31, 3), "contacts": (4,), "phase": (), "gait": (6,), "stick": (2,),
                  "trigger": (2,), "joint_names": (31,), "parents": (31,), "scene": (), "mode": ()}


def test_help_lists_the_subcommands(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in ("run", "convert-weights"):
        assert command in out


def test_missing_network_says_how_to_pass_one(capsys, monkeypatch, tmp_path):
    import pfnn_demo.resources as resources
    monkeypatch.setattr(resources, "default_network_path", lambda: tmp_path / "pfnn.npz")
    assert main(["--headless", "--script", "walk_circle"]) == 2
    err = capsys.readouterr().err
    assert "no network is installed" in err and "--network PATH" in err


def test_convert_weights(tmp_path, capsys):
    weights = make_random_weights(seed=2)
    save_original_folder(weights, tmp_path / "pfnn", count=50)
    assert main(["convert-weights", str(tmp_path / "pfnn"), str(tmp_path / "out.npz")]) == 0
    converted = load_npz(tmp_path / "out.npz")
    np.testing.assert_allclose(converted.W1, weights.W1, atol=1e-5)
    assert "wrote" in capsys.readouterr().out
    assert main(["convert-weights", str(tmp_path / "nothing"), str(tmp_path / "x.npz")]) == 2
    assert "no such network folder" in capsys.readouterr().err


def test_headless_run_writes_a_documented_recording(tmp_path):
    network = tmp_path / "net.npz"
    save_npz(make_random_weights(seed=3), network)
    out = tmp_path / "rec.npz"
    code = main(["run", "--headless", "--network", str(network), "--scene", "tunnel", "--script", "strafe",
                 "--frames", "90", "--record", str(out), "--mode", "linear", "--no-ik"])
    assert code == 0
    with np.load(out) as recording:
        for key, shape in RECORDING_KEYS.items():
            assert key in recording.files, key
            values = recording[key]
            if key in ("fps", "scene", "mode", "joint_names", "parents"):
                continue
            assert values.shape == (90,) + shape, key
        assert str(recording["scene"]) == "tunnel" and str(recording["mode"]) == "linear"
        assert int(recording["fps"]) == 60
        # IK off: the drawn pose is the network's, on the rest bone lengths.
        np.testing.assert_allclose(recording["joint_positions"],
                                   keep_bone_lengths(recording["joint_positions_raw"], recording["joint_rotations"]),
                                   atol=1e-3)


def test_headless_errors_are_one_line(tmp_path, capsys):
    network = tmp_path / "net.npz"
    save_npz(make_random_weights(seed=3), network)
    assert main(["run", "--headless", "--network", str(network)]) == 2
    assert "needs --script" in capsys.readouterr().err
    assert main(["run", "--headless", "--network", str(network), "--script", "walk_circle", "--scene", "moon"]) == 2
    assert "unknown scene 'moon'" in capsys.readouterr().err
    assert main(["run", "--headless", "--network", str(tmp_path / "none.npz"), "--script", "walk_circle"]) == 2
    assert "none.npz: no such" in capsys.readouterr().err


def _network_failing_when_walking(path):
    """A network file whose output turns absurd as soon as the character walks: its walk gait
    inputs (exactly 0 while standing) are weighted by 1e30."""
    weights = make_random_weights(seed=4)
    walk = np.arange(INPUT["gaits"].start + 12, INPUT["gaits"].start + 24)     # gait 1 (walk) of every sample
    weights.Xmean[walk], weights.Xstd[walk] = 0.0, 1.0
    weights.W0[:, :, walk] *= 1e30
    save_npz(weights, path)
    return path


def test_network_producing_nan_stops_with_a_clear_error_and_keeps_the_recording(tmp_path, capsys):
    network = str(_network_failing_when_walking(tmp_path / "diverging.npz"))
    run = ["run", "--headless", "--network", network, "--script", "walk_circle"]   # stands 1 s, then walks
    for name in ("failed.npz", "failed.bvh"):
        assert main(run + ["--frames", "120", "--record", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert "NaN, infinite or absurd values" in err and "at frame 60" in err and "Traceback" not in err
    # The same 60 frames played without the failure: the recordings hold exactly these.
    assert main(run + ["--frames", "60", "--record", str(tmp_path / "clean.npz")]) == 0
    with np.load(tmp_path / "failed.npz") as failed, np.load(tmp_path / "clean.npz") as clean:
        assert failed["joint_positions"].shape == (60, 31, 3)
        np.testing.assert_array_equal(failed["joint_positions"], clean["joint_positions"])
        drawn = clean["joint_positions"]
    motion = read_bvh(tmp_path / "failed.bvh")
    assert motion.frames == 60
    np.testing.assert_allclose(motion.global_transforms()[:, :, :3, 3], drawn, atol=1e-2)


class FailingNetwork(PhaseFunctionedNetwork):
    """A real network whose output turns to NaN after a number of calls (a diverging network)."""

    def __init__(self, weights, fail_after):
        super().__init__(weights, "cubic")
        self.calls, self.fail_after = 0, fail_after

    def predict_batch(self, x, phases):
        self.calls += 1
        y = super().predict_batch(x, phases)
        return y * np.nan if self.calls > self.fail_after else y


def test_failure_mid_run_keeps_every_earlier_frame():
    controller = Controller(FailingNetwork(make_random_weights(seed=5), fail_after=25), load_scene("plaza"),
                            start_pose="mean")   # its calls are counted from the first frame
    recorder = Recorder()
    _, failure = simulate(controller, InputScript.load("walk_circle"), 100, recorder)
    assert isinstance(failure, NetworkOutputError) and "frame 25" in str(failure)
    assert len(recorder) == 25
    assert np.all(np.isfinite(recorder.arrays()["joint_positions"]))


def test_simulation_core_imports_neither_pygame_nor_moderngl():
    code = ("import sys, pfnn_demo.sim.controller, pfnn_demo.sim.headless, pfnn_demo.sim.recording, pfnn_demo.tools.cli; "
            "bad = [m for m in ('pygame', 'moderngl', 'moderngl_window') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_screenshot_of_a_bvh_pose_needs_no_network(tmp_path):
    from conftest import require_shared
    clip = require_shared("data/cmu/02_01.bvh")
    out = tmp_path / "pose.png"
    assert main(["screenshot", str(out), "--bvh", str(clip), "--bvh-frame", "10", "--size", "320x200"]) == 0
    import pygame
    image = pygame.surfarray.array3d(pygame.image.load(str(out)))
    assert image.shape[:2] == (320, 200)
    rgb = image.astype(int)
    sky = np.sum(rgb[..., 2] > rgb[..., 0] + 20)          # blue above the horizon
    body = np.sum(rgb[..., 0] > rgb[..., 2] + 40)         # the warm-coloured character
    assert sky > 5000 and body > 200, (sky, body)
    assert main(["screenshot", str(out), "--bvh", str(clip), "--bvh-frame", "999"]) == 2


def test_the_shipped_network_runs_by_default(tmp_path):
    """`pfnn-demo` with no --network uses network/pfnn.npz, the project's own."""
    out = tmp_path / "default.npz"
    assert main(["run", "--headless", "--script", "walk_circle", "--frames", "600", "--record", str(out)]) == 0
    with np.load(out) as recording:
        provenance = str(recording["network"])
        assert "Trained by pfnn-demo" in provenance and "zlib" in provenance   # its data and licence
        joints = recording["joint_positions"]
        assert np.all(np.isfinite(joints))
        moved = np.linalg.norm(recording["root_position"][-1, [0, 2]] - recording["root_position"][0, [0, 2]])
        assert moved > 200                                               # it walks
        head = joints[:, 16, 1] - joints[:, [4, 9], 1].min(axis=1)
        assert 110 < np.median(head) < 160                               # upright


def test_no_opengl_window_is_one_line_that_says_what_works_instead(capsys, monkeypatch):
    # The dummy SDL video driver (as on a machine without a display) offers no OpenGL windows.
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    assert main(["--mode", "cubic"]) == 2
    err = capsys.readouterr().err
    error = err.strip().splitlines()[-1]
    assert error.startswith("pfnn-demo: error: cannot open an OpenGL window")
    assert "run --headless" in error and "Traceback" not in err


@pytest.mark.parametrize("argv, option", [
    (["run", "--headless", "--script", "walk_circle", "--characters", "3", "--seed", "-5"], "--seed"),
    (["run", "--headless", "--script", "walk_circle", "--characters", "0"], "--characters"),
    (["run", "--headless", "--script", "walk_circle", "--frames", "ten"], "--frames"),
    (["replay", "x.npz", "--bvh-scale", "-1"], "--bvh-scale"),
    (["screenshot", "x.png", "--camera-distance", "nan"], "--camera-distance"),
    (["screenshot", "x.png", "--frame", "-2"], "--frame"),
    (["train", "--learning-rate", "0"], "--learning-rate"),
    (["train", "--pose-noise", "inf"], "--pose-noise"),
    (["retarget", "a.bvh", "b.bvh", "--seconds", "-3"], "--seconds"),
])
def test_a_bad_number_in_an_option_is_a_one_line_error(argv, option, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and f"argument {option}:" in errors[0] and "Traceback" not in err, err


def _table_values(out: str) -> dict:
    rows = {}
    for line in out.splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if len(cells) == 4 and cells[0] not in ("script", "---"):
            rows[tuple(cells[:2])] = [float(value) for value in cells[2:]]
    return rows


def test_eval_plays_cases_in_worker_processes_with_the_same_figures(tmp_path, capsys):
    from pfnn_demo.resources import shipped_network_path

    command = ["eval", "--network", str(shipped_network_path("pfnn")), "--network", str(shipped_network_path("mann")),
               "--script", "jump_bars", "--script", "turn_180", "--plots", str(tmp_path / "plots")]
    assert main(command) == 0
    alone = _table_values(capsys.readouterr().out)
    assert main(command + ["--jobs", "2", "--record-dir", str(tmp_path / "plays")]) == 0
    out = capsys.readouterr().out
    shared = _table_values(out)
    assert len(alone) == 2 * 17 and shared.keys() == alone.keys()
    # Workers run one BLAS thread each, where this process may run several: sums may round
    # differently, nothing more.
    for key, values in alone.items():
        assert shared[key] == pytest.approx(values, rel=1e-3, abs=1e-6, nan_ok=True), key
    assert sorted(path.name for path in (tmp_path / "plays").glob("*.npz")) == [
        "jump_bars-mann.npz", "jump_bars-pfnn.npz", "turn_180-mann.npz", "turn_180-pfnn.npz"]
    assert "Bars against pfnn (" in out


def test_eval_refuses_no_workers(capsys):
    assert main(["eval", "--script", "turn_180", "--jobs", "0"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_train_refuses_a_negative_count_of_moving_turns(tmp_path, capsys):
    assert main(["train", "--data", "data", "--out", str(tmp_path / "n.npz"), "--moving-turns", "-1"]) == 2
    assert "--moving-turns must be 0 or more" in capsys.readouterr().err
    assert not (tmp_path / "n.npz").exists()
