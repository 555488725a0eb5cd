"""Files that are not .npz archives, given where one is read (network, heightmap, recording,
phases): one line that says what the file is instead, never numpy's internals."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from pfnn_demo.errors import HeightmapError, PfnnError, WeightsError
from pfnn_demo.sim.recording import RecordingError, load_recording
from pfnn_demo.sim.terrain import Heightmap
from pfnn_demo.sim.weights import load_weights
from pfnn_demo.tools.cli import main
from pfnn_demo.tools.phase_manifold import PhaseEncoder

REPOSITORY = Path(__file__).resolve().parents[1]


def _npy_bytes(array: np.ndarray) -> bytes:
    """The bytes of `array` saved as a .npy file (np.save would append .npy to a path's name)."""
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _not_archives(folder: Path) -> dict[str, tuple[Path, str]]:
    """Name -> (a file that is not a readable .npz, the reason its error must give)."""
    files = {}

    def add(name: str, reason: str, write) -> None:
        path = folder / f"{name}.npz"
        write(path)
        files[name] = (path, reason)

    add("empty", "it is empty", lambda p: p.write_bytes(b""))
    add("text", "not a zip archive", lambda p: p.write_text("heights = 1, 2, 3\n"))
    add("npy", "a single .npy array", lambda p: p.write_bytes(_npy_bytes(np.zeros(3))))
    shipped = (REPOSITORY / "network" / "pfnn.npz").read_bytes()
    add("truncated", "truncated or corrupt", lambda p: p.write_bytes(shipped[:len(shipped) // 2]))
    add("objects", "Python objects", lambda p: np.savez(p, heights=np.array([{"a": 1}], dtype=object)))
    return files


LOADERS = {"network": (load_weights, WeightsError, "file"), "heightmap": (Heightmap.load, HeightmapError, "file"),
           "recording": (load_recording, RecordingError, "recording"),
           "phases": (PhaseEncoder.load, PfnnError, "phases file")}


@pytest.mark.parametrize("loader", LOADERS)
def test_a_file_that_is_no_npz_archive_says_what_it_is(tmp_path, loader):
    load, error, noun = LOADERS[loader]
    for name, (path, reason) in _not_archives(tmp_path).items():
        with pytest.raises(error) as raised:
            load(path)
        message = str(raised.value)
        assert message.startswith(f"{path}: not a readable .npz {noun}: "), (name, message)
        assert reason in message and "\n" not in message, (name, message)
        # numpy's own words: its advice to unpickle, its classes
        assert "allow_pickle" not in message and "ndarray" not in message, (name, message)


def test_the_commands_give_one_line_for_a_foreign_file(tmp_path, capsys):
    files = _not_archives(tmp_path)
    for arguments, reason in ((["run", "--network", str(files["npy"][0]), "--headless", "--script", "walk_circle"],
                               "a single .npy array"),
                              (["screenshot", str(tmp_path / "x.png"), "--replay", str(files["text"][0])],
                               "not a zip archive"),
                              (["run", "--headless", "--script", "walk_circle", "--network",
                                str(files["objects"][0])], "Python objects")):
        assert main(arguments) == 2
        err = capsys.readouterr().err
        assert reason in err and len(err.strip().splitlines()) == 1, err

