"""Network weight formats: the project's `.npz` and the original PFNN release folder.

Both load into `NetworkWeights`: the 4 Catmull-Rom control points of every layer plus the
input/output normalisation. The original release stores 50 precomputed phase slices instead of
the control points; they are recovered exactly by least squares (see `recover_control_points`).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from ..errors import WeightsError
from .npz_files import read_npz

FORMAT_VERSION = 1
CONTROL_POINTS = 4
LAYERS = ("W0", "b0", "W1", "b1", "W2", "b2")
NORMALISATION = ("Xmean", "Xstd", "Ymean", "Ystd")

# Largest relative residual of the least-squares fit that still counts as a Catmull-Rom precompute.
# A faithful release fits to float32 rounding (~3e-7); anything else misses by orders of magnitude.
MAX_PRECOMPUTE_RESIDUAL = 1e-4


@dataclasses.dataclass
class NetworkWeights:
    """Control points (4, out, in) / (4, out) per layer, normalisation, and provenance."""

    W0: np.ndarray
    b0: np.ndarray
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    Xmean: np.ndarray
    Xstd: np.ndarray
    Ymean: np.ndarray
    Ystd: np.ndarray
    provenance: str = ""
    # True where the network's heel contacts lead its toe contacts (heel strikes come first, as in
    # the project's own labels): foot IK then locks a foot on either. The original's do not.
    heel_contacts: bool = False
    joint_count: int = 31
    trajectory_samples: int = 12

    @property
    def input_size(self) -> int:
        return self.W0.shape[2]

    @property
    def output_size(self) -> int:
        return self.W2.shape[1]

    @property
    def hidden_sizes(self) -> tuple[int, int]:
        return self.W0.shape[1], self.W1.shape[1]

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return [(self.W0, self.b0), (self.W1, self.b1), (self.W2, self.b2)]

    def validate(self, source: str | Path = "<weights>") -> None:
        """Check shapes agree across layers and every value is finite."""
        arrays = {name: getattr(self, name) for name in LAYERS + NORMALISATION}
        for name in ("W0", "W1", "W2"):
            if arrays[name].ndim != 3 or arrays[name].shape[0] != CONTROL_POINTS:
                raise WeightsError(f"{name} has shape {arrays[name].shape}, expected ({CONTROL_POINTS}, out, in)", source)
        for name in ("b0", "b1", "b2"):
            if arrays[name].ndim != 2 or arrays[name].shape[0] != CONTROL_POINTS:
                raise WeightsError(f"{name} has shape {arrays[name].shape}, expected ({CONTROL_POINTS}, out)", source)
        x_dim, y_dim = arrays["Xmean"].shape, arrays["Ymean"].shape
        expected = {
            "b0": arrays["W0"].shape[1],
            "b1": arrays["W1"].shape[1],
            "b2": arrays["W2"].shape[1],
        }
        for name, size in expected.items():
            if arrays[name].shape[1] != size:
                raise WeightsError(f"{name} has {arrays[name].shape[1]} units but its weights have {size} rows", source)
        chain = [("W0", x_dim[0]), ("W1", arrays["W0"].shape[1]), ("W2", arrays["W1"].shape[1])]
        for name, size in chain:
            if arrays[name].shape[2] != size:
                raise WeightsError(
                    f"{name} takes {arrays[name].shape[2]} inputs but the layer before gives {size}", source)
        if arrays["Xstd"].shape != x_dim:
            raise WeightsError(f"Xstd has shape {arrays['Xstd'].shape}, Xmean {x_dim}", source)
        if arrays["Ystd"].shape != y_dim or y_dim[0] != arrays["W2"].shape[1]:
            raise WeightsError(f"Ymean/Ystd shapes {y_dim}/{arrays['Ystd'].shape} do not match W2's "
                               f"{arrays['W2'].shape[1]} outputs", source)
        for name, array in arrays.items():
            if not np.all(np.isfinite(array)):
                bad = int(np.count_nonzero(~np.isfinite(array)))
                raise WeightsError(f"{name} holds {bad} NaN or infinite values", source)
        if np.any(arrays["Xstd"] == 0) or np.any(arrays["Ystd"] == 0):
            raise WeightsError("Xstd or Ystd holds zeros (division by zero when normalising)", source)


# ---------------------------------------------------------------------------------------------
# Catmull-Rom phase function


def catmull_rom_weights(phase: np.ndarray | float) -> np.ndarray:
    """Weights of the 4 cyclic control points at `phase` (radians, any value; wraps at 2*pi).

    Returns shape (..., 4). The basis is the uniform Catmull-Rom spline through the control
    points placed at phases 0, pi/2, pi, 3*pi/2 (spec section 5.1).
    """
    phase = np.asarray(phase, dtype=np.float64)
    pscale = np.mod(phase, 2 * np.pi) * (CONTROL_POINTS / (2 * np.pi))
    k1 = np.floor(pscale)
    mu = pscale - k1
    k1 = k1.astype(np.int64) % CONTROL_POINTS
    mu2, mu3 = mu * mu, mu * mu * mu
    basis = (
        -0.5 * mu3 + mu2 - 0.5 * mu,        # k0 = k1 - 1
        1.5 * mu3 - 2.5 * mu2 + 1.0,        # k1
        -1.5 * mu3 + 2.0 * mu2 + 0.5 * mu,  # k2 = k1 + 1
        0.5 * mu3 - 0.5 * mu2,              # k3 = k1 + 2
    )
    control = np.arange(CONTROL_POINTS)
    weights = np.zeros(phase.shape + (CONTROL_POINTS,))
    for offset, value in zip((-1, 0, 1, 2), basis):
        weights += np.asarray(value)[..., None] * ((k1[..., None] + offset) % CONTROL_POINTS == control)
    return weights


def sample_phase_function(control_points: np.ndarray, count: int) -> np.ndarray:
    """Evaluate the phase function at phases 2*pi*i/count, i = 0..count-1 (float64 maths)."""
    basis = catmull_rom_weights(2 * np.pi * np.arange(count) / count)  # (count, 4)
    flat = control_points.reshape(CONTROL_POINTS, -1).astype(np.float64)
    return (basis @ flat).astype(np.float32).reshape((count,) + control_points.shape[1:])


def recover_control_points(slices: np.ndarray, source: str | Path) -> tuple[np.ndarray, float]:
    """Least-squares control points from `count` slices sampled at 2*pi*i/count.

    Returns the control points (float32) and the relative residual (max abs error / max abs value).
    """
    count = slices.shape[0]
    basis = catmull_rom_weights(2 * np.pi * np.arange(count) / count)  # (count, 4)
    pseudo_inverse = np.linalg.pinv(basis)  # (4, count)
    flat = slices.reshape(count, -1)
    control = np.empty((CONTROL_POINTS, flat.shape[1]), dtype=np.float32)
    worst = 0.0
    scale = float(np.max(np.abs(flat))) or 1.0
    for start in range(0, flat.shape[1], 65536):  # chunks keep float64 temporaries small
        block = flat[:, start:start + 65536].astype(np.float64)
        fitted = pseudo_inverse @ block
        control[:, start:start + 65536] = fitted
        worst = max(worst, float(np.max(np.abs(basis @ fitted - block))))
    return control.reshape((CONTROL_POINTS,) + slices.shape[1:]), worst / scale


# ---------------------------------------------------------------------------------------------
# The project's .npz format


def save_npz(weights: NetworkWeights, path: str | Path) -> None:
    weights.validate(path)
    arrays = {name: np.ascontiguousarray(getattr(weights, name), dtype=np.float32)
              for name in LAYERS + NORMALISATION}
    np.savez_compressed(path, **npz_header(weights), **arrays)


def npz_header(weights, kind: str | None = None) -> dict[str, np.ndarray]:
    """The fields every kind's network file carries beside its arrays (`kind`: none for a PFNN)."""
    return {"format_version": np.int32(FORMAT_VERSION), **({"kind": np.str_(kind)} if kind else {}),
            "joint_count": np.int32(weights.joint_count),
            "trajectory_samples": np.int32(weights.trajectory_samples), "provenance": np.str_(weights.provenance),
            "heel_contacts": np.bool_(weights.heel_contacts)}


def read_npz_arrays(path: str | Path) -> dict[str, np.ndarray]:
    """Every array of a network .npz, after the checks every kind shares (readable, not newer)."""
    path = Path(path)
    if not path.is_file():
        raise WeightsError("no such weights file", path)
    contents = read_npz(path, WeightsError)
    version = int(contents.get("format_version", FORMAT_VERSION))
    if version > FORMAT_VERSION:
        raise WeightsError(f"format version {version} is newer than this pfnn-demo understands "
                           f"({FORMAT_VERSION}); upgrade pfnn-demo", path)
    return contents


def npz_kind(contents: dict) -> str:
    """The controller kind a network file declares; files without one are PFNNs."""
    return str(contents["kind"]) if "kind" in contents else "pfnn"


def load_npz(path: str | Path) -> NetworkWeights:
    path = Path(path)
    contents = read_npz_arrays(path)
    return pfnn_from_arrays(contents, path)


def pfnn_from_arrays(contents: dict, path: Path) -> NetworkWeights:
    """NetworkWeights from the arrays of a PFNN .npz."""
    if npz_kind(contents) != "pfnn":
        raise WeightsError(f"a network of kind {npz_kind(contents)!r}, not a phase-functioned network", path)
    missing = [key for key in LAYERS + NORMALISATION if key not in contents]
    if missing:
        raise WeightsError(f"missing arrays {', '.join(missing)}", path)
    weights = NetworkWeights(
        **{key: np.ascontiguousarray(contents[key], dtype=np.float32) for key in LAYERS + NORMALISATION},
        provenance=str(contents.get("provenance", "")),
        heel_contacts=bool(contents.get("heel_contacts", False)),
        joint_count=int(contents.get("joint_count", 31)),
        trajectory_samples=int(contents.get("trajectory_samples", 12)),
    )
    weights.validate(path)
    return weights


# ---------------------------------------------------------------------------------------------
# The original release folder (raw float32 .bin files)

ORIGINAL_PROVENANCE = (
    "Original PFNN network (Holden, Komura, Saito, Phase-Functioned Neural Networks for Character "
    "Control, SIGGRAPH 2017), loaded from {folder}. License: free for academic and non-commercial purposes.")


def _read_bin(path: Path, size: int | None = None) -> np.ndarray:
    if not path.is_file():
        raise WeightsError("file missing from the network folder", path)
    nbytes = path.stat().st_size
    if nbytes % 4:
        raise WeightsError(f"{nbytes} bytes is not a whole number of float32 values", path)
    if size is not None and nbytes != 4 * size:
        raise WeightsError(f"has {nbytes // 4} values, expected {size}", path)
    values = np.fromfile(path, dtype="<f4")
    if not np.all(np.isfinite(values)):
        raise WeightsError(f"holds {int(np.count_nonzero(~np.isfinite(values)))} NaN or infinite values", path)
    return values


def _slice_count(folder: Path) -> int:
    indices = sorted(int(m.group(1)) for f in folder.iterdir() if (m := re.fullmatch(r"W0_(\d{3})\.bin", f.name)))
    if not indices:
        raise WeightsError("no W0_000.bin ... found: not an original PFNN network folder", folder)
    if indices != list(range(len(indices))):
        gap = next(i for i, value in enumerate(indices) if value != i)
        raise WeightsError(f"W0_{gap:03d}.bin is missing (found {len(indices)} W0 files)", folder)
    if len(indices) < CONTROL_POINTS:
        raise WeightsError(f"only {len(indices)} phase slices; at least {CONTROL_POINTS} are needed", folder)
    return len(indices)


def load_original_folder(folder: str | Path) -> NetworkWeights:
    """Load the original release (`W0_000.bin` ... `b2_049.bin`, `Xmean.bin` ...) as control points."""
    folder = Path(folder)
    if not folder.is_dir():
        raise WeightsError("no such network folder", folder)
    count = _slice_count(folder)
    norm = {name: _read_bin(folder / f"{name}.bin") for name in NORMALISATION}
    x_dim, y_dim = norm["Xmean"].size, norm["Ymean"].size
    for name, dim in (("Xstd", x_dim), ("Ystd", y_dim)):
        if norm[name].size != dim:
            raise WeightsError(f"has {norm[name].size} values but {name[0]}mean has {dim}", folder / f"{name}.bin")
    h0 = _read_bin(folder / "b0_000.bin").size
    h1 = _read_bin(folder / "b1_000.bin").size
    shapes = {"W0": (h0, x_dim), "b0": (h0,), "W1": (h1, h0), "b1": (h1,), "W2": (y_dim, h1), "b2": (y_dim,)}
    layers = {}
    for name, shape in shapes.items():
        size = int(np.prod(shape))
        slices = np.empty((count,) + shape, dtype=np.float32)
        for i in range(count):
            slices[i] = _read_bin(folder / f"{name}_{i:03d}.bin", size).reshape(shape)
        control, residual = recover_control_points(slices, folder)
        if residual > MAX_PRECOMPUTE_RESIDUAL:
            raise WeightsError(
                f"the {count} {name} slices are not samples of a 4-point Catmull-Rom phase function "
                f"(relative residual {residual:.2e} > {MAX_PRECOMPUTE_RESIDUAL:.0e}); "
                "is this folder an original PFNN precompute?", folder)
        layers[name] = control
    weights = NetworkWeights(**layers, **norm, provenance=ORIGINAL_PROVENANCE.format(folder=folder.name))
    weights.validate(folder)
    return weights


def save_original_folder(weights: NetworkWeights, folder: str | Path, count: int = 50) -> None:
    """Write `count` phase slices in the original release layout (used by tests and for export)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in NORMALISATION:
        getattr(weights, name).astype("<f4").tofile(folder / f"{name}.bin")
    for name in LAYERS:
        slices = sample_phase_function(getattr(weights, name), count)
        for i in range(count):
            slices[i].astype("<f4").tofile(folder / f"{name}_{i:03d}.bin")


def load_weights(path: str | Path) -> NetworkWeights:
    """Load either format: a `.npz` file or an original release folder."""
    path = Path(path)
    if path.is_dir():
        return load_original_folder(path)
    if path.suffix.lower() == ".npz" or path.is_file():
        return load_npz(path)
    raise WeightsError("no such file or folder (give a .npz file or an original PFNN network folder)", path)
