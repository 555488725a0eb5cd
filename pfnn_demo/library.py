"""Helpers of the public API (re-exported from `pfnn_demo`): load a network by path or the shipped one."""

from __future__ import annotations

from pathlib import Path

from .errors import WeightsError
from . import resources
from .sim.networks import load_network_file


def load_network(path: str | Path | None = None, mode: str | None = None):
    """A network ready to evaluate, of whatever kind its file declares (a PhaseFunctionedNetwork
    or a ModeAdaptiveNetwork): `path` is a project .npz or an original PFNN release folder; None
    means the PFNN shipped with pfnn-demo. `mode`: for a PFNN "cubic" (the default), "linear" or
    "constant"; other kinds have no modes (`network.modes` is empty) and take None."""
    if path is None:
        path = resources.default_network_path()
        if not path.exists():
            raise WeightsError(
                "no network is installed with this copy of pfnn-demo (network/pfnn.npz is missing). "
                "Pass one with --network PATH: a .npz in the project format, or the original PFNN release "
                "folder (PFNN/demo/network/pfnn, holding W0_000.bin ... Ystd.bin).")
    return load_network_file(path, mode)
