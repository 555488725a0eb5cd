"""Where the shipped data folders are, for an installed wheel and for a source checkout alike.

In the wheel, `shaders/`, `network/`, `heightmaps/`, `scripts/` and `characters/` are installed inside the package
(see pyproject.toml); in a checkout they sit at the top of the repository.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the folder `name` (shaders, network, heightmaps, scripts, characters)."""
    for candidate in (_PACKAGE_DIR / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the data folder {name!r} is missing from this installation of pfnn-demo")


def default_network_path() -> Path:
    return data_dir("network") / "pfnn.npz"


def shipped_network_path(kind: str) -> Path:
    """The network of controller kind `kind` (pfnn, mann, deepphase; or the phases file) shipped in
    network/ (it may be absent)."""
    return data_dir("network") / f"{kind}.npz"
