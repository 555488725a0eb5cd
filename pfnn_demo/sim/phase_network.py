"""The phase-functioned network at run time: NumPy, float32, three ways to pick weights by phase.

Modes (spec section 5.2):
  cubic     the exact Catmull-Rom phase function of the 4 control points, at any phase;
  linear    10 weight sets sampled at 2*pi*i/10, linear interpolation between neighbours;
  constant  50 weight sets sampled at 2*pi*i/50, the set below the phase (the original demo's mode).

Each layer blends K weight sets. Instead of blending the matrices (K passes over weight-sized
arrays, plus temporaries), the sets of a layer are stacked into one (K*out, in) matrix, multiplied
by the input in a single matrix-vector product, and the K resulting vectors are blended: the same
result, one pass over the weights, no weight-sized allocation per call.
"""

from __future__ import annotations

import math

import numpy as np

from .weights import CONTROL_POINTS, NetworkWeights, catmull_rom_weights, sample_phase_function

MODES = ("constant", "linear", "cubic")
SET_COUNTS = {"constant": 50, "linear": 10, "cubic": CONTROL_POINTS}
TWO_PI = 2.0 * math.pi
SNAP = 1e-9  # set-index tolerance: phases this close below a sample count as on it


def _cubic_selection(phase: float) -> tuple[list[int], list[float]]:
    pscale = (phase % TWO_PI) * (CONTROL_POINTS / TWO_PI)
    k1 = int(pscale)
    mu = pscale - k1
    k1 %= CONTROL_POINTS
    mu2 = mu * mu
    mu3 = mu2 * mu
    weights = [0.0] * CONTROL_POINTS
    weights[(k1 - 1) % 4] = -0.5 * mu3 + mu2 - 0.5 * mu
    weights[k1] = 1.5 * mu3 - 2.5 * mu2 + 1.0
    weights[(k1 + 1) % 4] = -1.5 * mu3 + 2.0 * mu2 + 0.5 * mu
    weights[(k1 + 2) % 4] = 0.5 * mu3 - 0.5 * mu2
    return [0, 1, 2, 3], weights


def _linear_selection(phase: float, count: int) -> tuple[list[int], list[float]]:
    scaled = (phase % TWO_PI) * (count / TWO_PI)
    k = min(int(scaled + SNAP), count - 1)
    mu = min(max(scaled - k, 0.0), 1.0)
    return [k, (k + 1) % count], [1.0 - mu, mu]


def _constant_selection(phase: float, count: int) -> tuple[list[int], list[float]]:
    # The original truncates phase/2pi*50 without a clamp; a phase a hair below 2*pi must not read
    # set 50, and a phase computed as 2*pi*i/50 must read set i despite rounding (SNAP).
    return [min(int((phase % TWO_PI) * (count / TWO_PI) + SNAP), count - 1)], [1.0]


def elu(values: np.ndarray) -> np.ndarray:
    """ELU: v for v > 0, exp(v) - 1 otherwise (a new array)."""
    return np.where(values > 0, values, np.expm1(np.minimum(values, 0)))


def normalisation_arrays(weights) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """float32 (input mean, 1 / input deviation, output mean, output deviation) of any kind's weights."""
    return (weights.Xmean.astype(np.float32), (1.0 / weights.Xstd.astype(np.float64)).astype(np.float32),
            weights.Ymean.astype(np.float32), weights.Ystd.astype(np.float32))


def _elu_(values: np.ndarray, scratch: np.ndarray) -> None:
    """In-place ELU: v for v > 0, exp(v) - 1 otherwise."""
    np.minimum(values, 0.0, out=scratch)
    np.expm1(scratch, out=scratch)
    np.maximum(values, 0.0, out=values)
    values += scratch


class _Layer:
    """The K weight sets of one layer, stacked for a single matrix-vector product."""

    def __init__(self, weight_sets: np.ndarray, bias_sets: np.ndarray):
        self.sets, self.out_size, self.in_size = weight_sets.shape
        self.weights = np.ascontiguousarray(weight_sets, dtype=np.float32)
        self.stacked = self.weights.reshape(self.sets * self.out_size, self.in_size)
        self.biases = np.ascontiguousarray(bias_sets, dtype=np.float32)
        self.products = np.empty(CONTROL_POINTS * self.out_size, dtype=np.float32)
        self.result = np.empty(self.out_size, dtype=np.float32)
        self.scratch = np.empty(self.out_size, dtype=np.float32)

    def apply(self, x: np.ndarray, indices: list[int], blend: list[float]) -> np.ndarray:
        out = self.out_size
        if len(indices) == 1:
            k = indices[0]
            np.dot(self.weights[k], x, out=self.result)
            self.result += self.biases[k]
            return self.result
        n = len(indices)
        products = self.products[:n * out]
        first = indices[0]
        if indices[-1] - first == n - 1:  # consecutive sets: one product over the stacked rows
            np.dot(self.stacked[first * out:(first + n) * out], x, out=products)
        else:
            for slot, k in enumerate(indices):
                np.dot(self.weights[k], x, out=products[slot * out:(slot + 1) * out])
        blend_vector = np.asarray(blend, dtype=np.float32)
        np.dot(blend_vector, products.reshape(n, out), out=self.result)
        self.result += blend_vector @ self.biases[indices]
        return self.result

    def apply_batch(self, x: np.ndarray, set_weights: np.ndarray) -> np.ndarray:
        """x (N, in), set_weights (N, K) -> (N, out).

        Where every row blends every set (cubic mode), one product with the stacked sets and a
        per-row blend; otherwise one product per set in use, over the rows that use it.
        """
        count, out = x.shape[0], self.out_size
        used = np.flatnonzero(np.any(set_weights != 0, axis=0))
        blend = set_weights.astype(np.float32)
        if len(used) == self.sets and self.sets <= CONTROL_POINTS:
            products = (x @ self.stacked.T).reshape(count, self.sets, out)
            return np.einsum("nk,nko->no", blend, products) + blend @ self.biases
        result = np.zeros((count, out), dtype=np.float32)
        for k in used:
            rows = np.flatnonzero(set_weights[:, k])
            if len(rows) == count:
                result += blend[:, k, None] * (x @ self.weights[k].T + self.biases[k])
            else:
                result[rows] += blend[rows, k, None] * (x[rows] @ self.weights[k].T + self.biases[k])
        return result

    @property
    def nbytes(self) -> int:
        return self.weights.nbytes + self.biases.nbytes


class PhaseFunctionedNetwork:
    """Evaluate a PFNN: `predict(x, phase)` maps the un-normalised input to the un-normalised output."""

    kind = "pfnn"        # its controller policy: policy.PhasePolicy
    modes = MODES
    default_mode = "cubic"

    def __init__(self, weights: NetworkWeights, mode: str | None = "cubic"):
        self.weights = weights
        self._x_mean, self._x_scale, self._y_mean, self._y_std = normalisation_arrays(weights)
        self._x = np.empty(weights.input_size, dtype=np.float32)
        self.mode = ""
        self.set_mode(mode or self.default_mode)

    @property
    def input_size(self) -> int:
        return self.weights.input_size

    @property
    def output_size(self) -> int:
        return self.weights.output_size

    def set_mode(self, mode: str) -> None:
        """Switch mode; the 10 or 50 weight sets are built from the control points only when needed."""
        if mode not in MODES:
            raise ValueError(f"unknown network mode {mode!r}; choose one of {', '.join(MODES)}")
        if mode == self.mode:
            return
        count = SET_COUNTS[mode]
        layers = []
        for weight_points, bias_points in self.weights.layers():
            if mode == "cubic":
                layers.append(_Layer(weight_points, bias_points))
            else:
                layers.append(_Layer(sample_phase_function(weight_points, count),
                                     sample_phase_function(bias_points, count)))
        self._layers = layers
        self.mode = mode

    def _selection(self, phase: float) -> tuple[list[int], list[float]]:
        if self.mode == "cubic":
            return _cubic_selection(phase)
        if self.mode == "linear":
            return _linear_selection(phase, SET_COUNTS["linear"])
        return _constant_selection(phase, SET_COUNTS["constant"])

    def set_weights_for(self, phases: np.ndarray) -> np.ndarray:
        """(N,) phases -> (N, K) blend weights over this mode's K weight sets."""
        phases = np.mod(np.asarray(phases, dtype=np.float64), 2 * np.pi)
        if self.mode == "cubic":
            return catmull_rom_weights(phases)
        count = SET_COUNTS[self.mode]
        scaled = phases * (count / (2 * np.pi))
        lower = np.minimum(np.floor(scaled + SNAP).astype(np.int64), count - 1)
        weights = np.zeros((phases.size, count))
        rows = np.arange(phases.size)
        if self.mode == "constant":
            weights[rows, lower] = 1.0
        else:
            mu = np.clip(scaled - lower, 0.0, 1.0)
            weights[rows, lower] += 1.0 - mu
            weights[rows, (lower + 1) % count] += mu
        return weights

    def predict(self, x: np.ndarray, phase: float) -> np.ndarray:
        """One input (input_size,) at `phase` radians -> a new output array (output_size,)."""
        np.subtract(x, self._x_mean, out=self._x)
        self._x *= self._x_scale
        indices, blend = self._selection(float(phase))
        hidden = self._x
        last = len(self._layers) - 1
        for depth, layer in enumerate(self._layers):
            hidden = layer.apply(hidden, indices, blend)
            if depth < last:
                _elu_(hidden, layer.scratch)
        return hidden * self._y_std + self._y_mean

    def predict_batch(self, x: np.ndarray, phases: np.ndarray) -> np.ndarray:
        """Many inputs (N, input_size) at their own phases (N,) -> outputs (N, output_size)."""
        x = np.atleast_2d(np.asarray(x, dtype=np.float32))
        phases = np.broadcast_to(np.asarray(phases, dtype=np.float64), (x.shape[0],))
        set_weights = self.set_weights_for(phases)
        hidden = (x - self._x_mean) * self._x_scale
        last = len(self._layers) - 1
        for depth, layer in enumerate(self._layers):
            hidden = layer.apply_batch(hidden, set_weights)
            if depth < last:
                hidden = elu(hidden)
        return hidden * self._y_std + self._y_mean

    @property
    def nbytes(self) -> dict[str, int]:
        """Bytes held: the current mode's weight sets, and the control points kept for switching."""
        tables = 0 if self.mode == "cubic" else sum(layer.nbytes for layer in self._layers)
        control = sum(w.nbytes + b.nbytes for w, b in self.weights.layers())
        return {"mode_tables": tables, "control_points": control, "total": tables + control}


def predict_naive(weights: NetworkWeights, x: np.ndarray, phase: float) -> np.ndarray:
    """Reference evaluation straight from the spec: blend each layer's matrices, then multiply.

    Float64, slow, and independent of the stacked runtime above: used to check it and to
    measure it against.
    """
    blend = catmull_rom_weights(phase)
    h = (np.asarray(x, np.float64) - weights.Xmean) / weights.Xstd
    layers = weights.layers()
    for depth, (weight_points, bias_points) in enumerate(layers):
        matrix = np.tensordot(blend, weight_points.astype(np.float64), axes=1)
        bias = blend @ bias_points.astype(np.float64)
        h = matrix @ h + bias
        if depth < len(layers) - 1:
            h = elu(h)
    return h * weights.Ystd + weights.Ymean
