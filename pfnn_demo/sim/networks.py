"""Any controller's network from its file: the kind a file declares picks the reader and runtime.

A network .npz says what it is in its `kind` array (files without one, and the original PFNN
release folder, are phase-functioned networks). A new kind registers its reader (arrays ->
weights), runtime and writer here, and its per-character state in policy.POLICIES.
"""

from __future__ import annotations

import hashlib
from functools import partial
from pathlib import Path
from typing import Callable, NamedTuple

from ..errors import WeightsError
from .deepphase import KIND as DEEPPHASE, DeepPhaseNetwork
from .mann import KIND as MANN, ModeAdaptiveNetwork, mann_from_arrays, save_mann
from .phase_network import PhaseFunctionedNetwork
from .weights import load_original_folder, npz_kind, pfnn_from_arrays, read_npz_arrays, save_npz


class Kind(NamedTuple):
    read: Callable        # (arrays of the .npz, path) -> validated weights
    runtime: Callable     # (weights, mode) -> the network runtime
    write: Callable       # (weights, path) -> None: the .npz of this kind


KINDS = {
    "pfnn": Kind(pfnn_from_arrays, PhaseFunctionedNetwork, save_npz),
    MANN: Kind(mann_from_arrays, ModeAdaptiveNetwork, partial(save_mann, kind=MANN)),
    # a gated mixture of experts too
    DEEPPHASE: Kind(mann_from_arrays, DeepPhaseNetwork, partial(save_mann, kind=DEEPPHASE)),
}


def load_network_file(path: str | Path, mode: str | None = None):
    """The runtime of the network at `path` (a project .npz of any kind, or an original PFNN
    release folder). `mode`: one of the runtime's `modes` (None: its default; kinds without
    modes take only None)."""
    path = Path(path)
    if path.is_dir():
        return PhaseFunctionedNetwork(load_original_folder(path), mode)
    if not path.exists():
        raise WeightsError("no such file or folder (give a .npz file or an original PFNN network folder)", path)
    kind, weights = read_network_weights(path)
    try:
        return KINDS[kind].runtime(weights, mode)
    except ValueError as error:
        raise WeightsError(str(error), path) from None


def read_network_weights(path: str | Path) -> tuple[str, object]:
    """The kind and validated weights of the project .npz network at `path`, any kind."""
    path = Path(path)
    if not path.is_file():
        raise WeightsError("no such file (give a project .npz network)", path)
    contents = read_npz_arrays(path)
    kind = npz_kind(contents)
    if kind not in KINDS:
        raise WeightsError(f"a network of kind {kind!r}, which this pfnn-demo does not know "
                           f"(it knows {', '.join(KINDS)}); upgrade pfnn-demo", path)
    return kind, KINDS[kind].read(contents, path)


def write_network_weights(kind: str, weights, path: str | Path) -> None:
    """Save `weights` as a project .npz network of `kind`."""
    KINDS[kind].write(weights, path)


def file_md5(path: str | Path) -> str:
    """The MD5 a provenance string names a network file by."""
    return hashlib.md5(Path(path).read_bytes()).hexdigest()


def describe_network(network) -> str:
    """A few words for logs and the HUD: "cubic mode" for a PFNN, "MANN, 8 experts" for a MANN."""
    if network.modes:
        return f"{network.mode} mode"
    experts = getattr(network, "experts", None)
    return getattr(network, "title", network.kind.upper()) + (f", {experts} experts" if experts else "")
