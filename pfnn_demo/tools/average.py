"""Weight-for-weight averages of networks of one kind (a "model soup", Wortsman et al., ICML 2022).

Networks fine-tuned from one start lie in one basin of the loss, so a weighted average of their
weights plays as a network: `pfnn-demo train --keep-init` mixes a fine-tune with its start this
way, and `pfnn-demo average` mixes any number of such networks. Their input and output
normalisations must be the same (fine-tuning keeps its start's), since every weight reads inputs
so scaled.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from pathlib import Path

import numpy as np

from ..errors import PfnnError
from ..sim.networks import file_md5, read_network_weights, write_network_weights
from ..sim.weights import NORMALISATION

SHARE_TOLERANCE = 1e-6


def parse_part(text: str) -> tuple[str, float | None]:
    """"FILE.npz:SHARE" -> (FILE.npz, SHARE); "FILE.npz" -> (FILE.npz, None)."""
    path, _, share = text.rpartition(":")
    if not path:
        return text, None
    try:
        value = float(share)
    except ValueError:
        return text, None   # a colon inside the path itself
    if not (np.isfinite(value) and value > 0):
        raise PfnnError(f"{text}: a network's share must be a number above 0")
    return path, value


def average_shares(shares: list[float | None]) -> list[float]:
    """The shares of the parts: all given and adding up to 1, or none given (equal shares)."""
    if all(share is None for share in shares):
        return [1.0 / len(shares)] * len(shares)
    if any(share is None for share in shares):
        raise PfnnError("give every network a share (FILE.npz:SHARE) or none of them (equal shares)")
    total = sum(shares)
    if abs(total - 1.0) > SHARE_TOLERANCE:
        raise PfnnError(f"the shares add up to {total:g}; they must add up to 1")
    return list(shares)


def weighted_sum(arrays, shares) -> np.ndarray:
    """sum(share * array) in float64, in the order given, as float32: the one mix of weights that
    `average` and `train --keep-init` share."""
    terms = [share * np.asarray(array, np.float64) for array, share in zip(arrays, shares)]
    return functools.reduce(operator.add, terms).astype(np.float32)


def average_networks(paths: list[str | Path], shares: list[float]) -> tuple[str, object]:
    """(kind, weights): the networks at `paths` averaged weight for weight by `shares`, summed in
    float64 in the order given and stored as float32. The rest of the file (normalisation, gate
    inputs, sizes) must agree and is kept."""
    if len(paths) < 2:
        raise PfnnError("give at least two networks to average")
    read = [read_network_weights(path) for path in paths]
    if any(getattr(weights, "gate_phase", False) for _, weights in read):
        # A MANN gate that does not read the phase is one that gives it no weight: widened so, it
        # averages with one that reads it, the phase's weight scaled by that network's share.
        read = [(kind, weights.with_phase_in_gate() if hasattr(weights, "with_phase_in_gate") else weights)
                for kind, weights in read]
    kind, first = read[0]
    for path, (other_kind, weights) in zip(paths[1:], read[1:]):
        if other_kind != kind:
            raise PfnnError(f"a {other_kind} network; only networks of one kind average ({paths[0]} is a {kind})", path)
        _check_compatible(first, weights, paths[0], path)
    averaged = {}
    for field in dataclasses.fields(first):
        value = getattr(first, field.name)
        if _is_weight(field.name, value):
            averaged[field.name] = weighted_sum([getattr(weights, field.name) for _, weights in read], shares)
    parts = ", ".join(f"{share:g} of the network of MD5 {file_md5(path)}" for path, share in zip(paths, shares))
    provenance = f"The weight-for-weight average (pfnn-demo average) of {parts}. The first: {first.provenance}"
    return kind, dataclasses.replace(first, **averaged, provenance=provenance)


def write_average(out: str | Path, kind: str, weights) -> None:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_network_weights(kind, weights, out)


def _is_weight(name: str, value) -> bool:
    """A trained weight or bias: a float array that is not the normalisation."""
    return isinstance(value, np.ndarray) and value.dtype.kind == "f" and name not in NORMALISATION


def _check_compatible(first, other, first_path, path) -> None:
    for field in dataclasses.fields(first):
        if field.name == "provenance":
            continue
        a, b = getattr(first, field.name), getattr(other, field.name)
        if _is_weight(field.name, a):
            if np.shape(a) != np.shape(b):
                raise PfnnError(f"{field.name} has shape {np.shape(b)} where {first_path}'s has {np.shape(a)}: "
                                "only networks of the same sizes average", path)
        elif not np.array_equal(a, b):
            what = ("normalises its inputs or outputs otherwise" if field.name in NORMALISATION
                    else f"has another {field.name}")
            raise PfnnError(f"{what} than {first_path}: average only networks fine-tuned from one start "
                            "(pfnn-demo train --init), which keep its normalisation", path)

