"""Training windows kept on disk (`pfnn-demo train --window-cache DIR`), so that training again on
the same data, options and code skips building them. For a DeepPhase controller that is mostly
the encoding of every frame's phase manifold, 19 of the 29 minutes of a one-epoch fine-tune on the
shipped data; a fine-tune or a recipe trial after the first run starts training at once.

An entry is named by a digest of everything the windows are made from: the bytes of every file
in the data folders, the options that shape the windows, the phases file and the package's
source. Whatever changes, the name changes, so a stale entry is never read."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np

from ...errors import PfnnError

PACKAGE = Path(__file__).resolve().parents[2]
TRAINING = ("X", "Y", "P", "follows")
VALIDATION = ("X", "Y", "P")


def window_key(data_folders, options: dict, phases_file=None) -> str:
    """The digest naming the windows built from `data_folders` with `options` (JSON-able values)
    and the phases file: 24 hex digits."""
    digest = hashlib.sha256()

    def add_file(path: Path, name: str) -> None:
        digest.update(name.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())

    for index, folder in enumerate(Path(f) for f in data_folders):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            add_file(path, f"data{index}/{path.relative_to(folder).as_posix()}")
    digest.update(json.dumps(options, sort_keys=True).encode())
    if phases_file is not None:
        add_file(Path(phases_file), "phases")
    for path in sorted(PACKAGE.rglob("*.py")):
        add_file(path, path.relative_to(PACKAGE).as_posix())
    digest.update(np.__version__.encode())
    return digest.hexdigest()[:24]


def cached_windows(folder, key: str, build: Callable[[], tuple], log: Callable[[str], None],
                   about: dict | None = None) -> tuple:
    """The windows of entry `key` in `folder`: read when it is there and whole, else made by
    build() -> ((X, Y, P, follows), validation (X, Y, P) or None) and saved. An unreadable entry
    is built again; a cache that cannot be written is a one-line error before any work, and a
    save that fails (a full disk) only loses the cache, never the training."""
    folder = Path(folder)
    check_writable(folder)
    entry = folder / key
    if entry.is_dir():
        try:
            windows = _read(entry)
            log(f"read the training windows from {entry}")
            return windows
        except (OSError, ValueError, EOFError, KeyError) as error:
            log(f"the cached windows in {entry} are unreadable ({error}): building them again")
    windows = build()
    try:
        _write(folder, entry, windows, about or {})
        log(f"saved the training windows in {entry}")
    except OSError as error:
        log(f"could not save the training windows in {folder} ({error.strerror or error}); training goes on")
    return windows


def check_folder(folder: Path, data_folders) -> None:
    """Makes the cache folder: a one-line error where it cannot be written or lies in a data
    folder (its files would be read as clips and change the digest of the data)."""
    for data in data_folders:
        if folder.resolve().is_relative_to(Path(data).resolve()):
            raise PfnnError(f"--window-cache: put it outside the data folder {data}", folder)
    check_writable(folder)


def check_writable(folder: Path) -> None:
    """Makes the cache folder; a one-line error where it cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise PfnnError(f"--window-cache: cannot write there ({error.strerror or error})", folder) from None


def _read(entry: Path) -> tuple:
    with open(entry / "about.json") as file:
        has_validation = json.load(file)["validation"]
    training = tuple(np.load(entry / f"training_{name}.npy") for name in TRAINING)
    validation = (tuple(np.load(entry / f"validation_{name}.npy") for name in VALIDATION)
                  if has_validation else None)
    for arrays in (training,) + ((validation,) if validation else ()):
        if len({len(a) for a in arrays}) != 1:
            raise ValueError("its arrays differ in length")
    return training, validation


def _write(folder: Path, entry: Path, windows: tuple, about: dict) -> None:
    """Written beside the entry and renamed into place: an interrupted save leaves no entry."""
    training, validation = windows
    partial = Path(tempfile.mkdtemp(prefix=f".{entry.name}-", dir=folder))
    try:
        for name, array in zip(TRAINING, training):
            np.save(partial / f"training_{name}.npy", array)
        for name, array in zip(VALIDATION, validation or ()):
            np.save(partial / f"validation_{name}.npy", array)
        (partial / "about.json").write_text(json.dumps({**about, "validation": validation is not None,
                                                         "training_windows": len(training[0])}, indent=1))
        if entry.exists():
            shutil.rmtree(entry)      # an unreadable entry of the same name
        os.replace(partial, entry)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
