"""Helpers of the public API (re-exported from `pfnn_demo`): load a network by path or the shipped one."""

from __future__ import annotations

from pathlib import Path

from .errors import WeightsError
from . import resources
from .sim.phase_network import PhaseFunctionedNetwork
from .sim.weights import load_weights


def load_network(path: str | Path | None = None, mode: str = "cubic") -> PhaseFunctionedNetwork:
    """A network ready to evaluate: `path` is a project .npz or an original PFNN release folder;
    None means the network shipped with pfnn-demo. `mode`: "cubic", "linear" or "constant"."""
    if path is None:
        path = resources.default_network_path()
        if not path.exists():
            raise WeightsError(
                "no network is installed with this copy of pfnn-demo (network/pfnn.npz is missing). "
                "Pass one with --network PATH: a .npz in the project format, or the original PFNN release "
                "folder (PFNN/demo/network/pfnn, holding W0_000.bin ... Ystd.bin).")
    return PhaseFunctionedNetwork(load_weights(path), mode)
