"""The training window cache (`pfnn-demo train --window-cache DIR`): built once, read back equal,
named by everything the windows are made from, and never a reason to lose a training."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from pfnn_demo.errors import PfnnError
from pfnn_demo.tools.train.window_cache import cached_windows, window_key

REPO = Path(__file__).resolve().parents[1]
WALK = REPO / "data" / "motions" / "humanoid3d_walk.txt"


def walk_windows():
    """Real training windows: the DeepMimic walk's, with a held-out copy."""
    from pfnn_demo.motion.deepmimic import load_deepmimic
    from pfnn_demo.tools.train.database import clip_from_motion, clip_windows

    X, Y, P = clip_windows(clip_from_motion(load_deepmimic(WALK, 3.0), "walk"))
    return (X, Y, P, np.arange(len(X)) > 0), (X[:50], Y[:50], P[:50])


def counted(build):
    calls = []

    def run():
        calls.append(1)
        return build()
    return run, calls


def test_windows_are_built_once_and_read_back_equal(tmp_path):
    build, calls = counted(walk_windows)
    said = []
    first = cached_windows(tmp_path / "cache", "k1", build, said.append, {"data": ["motions"]})
    second = cached_windows(tmp_path / "cache", "k1", build, said.append)
    assert len(calls) == 1 and "saved" in said[0] and "read" in said[1]
    for made, read in zip(first[0] + first[1], second[0] + second[1]):
        assert read.dtype == made.dtype and np.array_equal(read, made)
    assert len(second[0][0]) > 100
    # Nothing half-written is left beside the entry.
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["k1"]
    # Another key is another entry, built anew.
    cached_windows(tmp_path / "cache", "k2", build, said.append)
    assert len(calls) == 2


def test_without_validation_windows_the_entry_reads_back_none(tmp_path):
    build, calls = counted(lambda: (walk_windows()[0], None))
    cached_windows(tmp_path, "k", build, lambda text: None)
    training, validation = cached_windows(tmp_path, "k", build, lambda text: None)
    assert len(calls) == 1 and validation is None and len(training) == 4


def test_the_name_changes_with_the_data_the_options_and_the_phases_file(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(WALK, data / WALK.name)
    phases = tmp_path / "phases.npz"
    phases.write_bytes(b"one")
    options = {"jumps": True, "walls_share": 0.25}
    key = window_key([data], options, phases)
    assert window_key([data], dict(reversed(options.items())), phases) == key      # order does not matter
    assert window_key([data], {**options, "walls_share": 0.5}, phases) != key
    assert window_key([data], options, None) != key
    phases.write_bytes(b"two")
    assert window_key([data], options, phases) != key
    phases.write_bytes(b"one")
    (data / "clips.json").write_text("{}")                  # a manifest labels the clips
    assert window_key([data], options, phases) != key
    (data / "clips.json").unlink()
    assert window_key([data], options, phases) == key
    text = (data / WALK.name).read_bytes()
    (data / WALK.name).write_bytes(text.replace(b"0", b"1", 1))
    assert window_key([data], options, phases) != key


def test_an_unreadable_entry_is_built_again(tmp_path):
    build, calls = counted(walk_windows)
    cached_windows(tmp_path, "k", build, lambda text: None)
    stored = tmp_path / "k" / "training_X.npy"
    stored.write_bytes(stored.read_bytes()[:1000])          # a save cut short by hand
    said = []
    training, _ = cached_windows(tmp_path, "k", build, said.append)
    assert len(calls) == 2 and "unreadable" in said[0] and "building them again" in said[0]
    assert np.array_equal(training[0], walk_windows()[0][0])
    assert np.array_equal(cached_windows(tmp_path, "k", build, said.append)[0][0], training[0])
    assert len(calls) == 2


def test_a_cache_that_cannot_be_written_is_a_one_line_error_before_any_work(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    build, calls = counted(walk_windows)
    with pytest.raises(PfnnError, match="--window-cache: cannot write there"):
        cached_windows(blocker / "cache", "k", build, lambda text: None)
    assert calls == []

    pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.tools.cli import main

    assert main(["train", "--data", str(REPO / "data" / "motions"), "--window-cache", str(blocker / "cache"),
                 "--out", str(tmp_path / "out.npz")]) == 2
    captured = capsys.readouterr().err.strip().splitlines()
    assert len(captured) == 1 and "--window-cache" in captured[0], captured
    # Inside a data folder its files would be read as clips: refused the same way.
    data = tmp_path / "data"
    shutil.copytree(REPO / "data" / "motions", data)
    assert main(["train", "--data", str(data), "--window-cache", str(data / "cache"),
                 "--out", str(tmp_path / "out.npz")]) == 2
    captured = capsys.readouterr().err.strip().splitlines()
    assert len(captured) == 1 and "outside the data folder" in captured[0], captured
    assert not (data / "cache").exists() and not (tmp_path / "out.npz").exists()
