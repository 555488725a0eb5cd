"""User-facing errors: each names the file or value at fault and what is wrong with it.

The command line prints these as one line and exits with status 2; anything else is a bug.
"""

from __future__ import annotations

from pathlib import Path


class PfnnError(Exception):
    """Base class of errors caused by user input (files, arguments), not by bugs."""

    def __init__(self, message: str, path: str | Path | None = None):
        self.path = None if path is None else Path(path)
        self.detail = message
        super().__init__(f"{self.path}: {message}" if self.path is not None else message)


class WeightsError(PfnnError):
    """Network weights that are missing, truncated, non-finite or inconsistent."""


class HeightmapError(PfnnError):
    """A heightmap file that cannot be read or holds unusable values."""


class SceneError(PfnnError):
    """A scene file that is malformed or names something that does not exist."""


class ScriptError(PfnnError):
    """An input script that is malformed."""


class NetworkOutputError(PfnnError):
    """The network produced NaN or infinite values; `characters` says whose (indices into a crowd)."""

    def __init__(self, message: str, characters=()):
        super().__init__(message)
        self.characters = tuple(int(i) for i in characters)
