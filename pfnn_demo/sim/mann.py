"""The mode-adaptive network (Zhang, Starke, Komura, Saito, SIGGRAPH 2018) for the biped: weights,
file format and NumPy runtime.

A small gating network reads a few of the inputs and gives a softmax over K experts; the motion
network's weights and biases are the gate-weighted blend of the experts' (three layers, ELU).
Inputs and outputs are the PFNN's (features.INPUT, features.OUTPUT) and no phase goes in: the
`phase_step` output is still trained, so a phase is predicted and carried for the HUD and
recordings; the motion network never reads it back, and the gate only where the file says
`gate_phase` (a trial against the glide, docs/controllers.md).

The gate reads what the paper chose, in this biped's inputs (GATE_INPUTS): the end effectors'
velocities (feet and hands), the target velocity (the future trajectory positions relative to
the root) and facing, and the gait (action) now.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np

from ..errors import WeightsError
from .features import GAITS, INPUT, SAMPLES
from .phase_network import elu, normalisation_arrays
from .skeleton import CANONICAL


def _gate_inputs() -> np.ndarray:
    now = SAMPLES // 2
    effectors = list(CANONICAL.contact_joints) + list(CANONICAL.hands)
    velocities = [INPUT["joint_velocities"].start + 3 * j + axis for j in effectors for axis in range(3)]
    future = [INPUT[name].start + k for name in ("trajectory_x", "trajectory_z") for k in range(now + 1, SAMPLES)]
    facing = [INPUT[name].start + SAMPLES - 1 for name in ("direction_x", "direction_z")]
    gait = [INPUT["gaits"].start + SAMPLES * g + now for g in range(GAITS)]
    return np.array(velocities + future + facing + gait, np.int64)


GATE_INPUTS = _gate_inputs()       # 36 indices into the 342 inputs
EXPERT_LAYERS = ("W0", "b0", "W1", "b1", "W2", "b2")
GATE_LAYERS = ("G0", "g0", "G1", "g1", "G2", "g2")
NORMALISATION = ("Xmean", "Xstd", "Ymean", "Ystd")
KIND = "mann"
PHASE_GATE_INPUTS = 2      # the carried phase's cosine and sine, for a gate that reads it
# How far each character's expert blend moves towards the gate's each frame in play, for files
# that do not say (policy.ExpertPolicy): the shipped MANN's and DeepPhase controller's.
DEFAULT_GATE_EASE = 0.5


@dataclasses.dataclass
class MannWeights:
    """Experts (K, out, in) / (K, out) per motion layer, the gate's layers (out, in) / (out,),
    the gate's input indices, normalisation and provenance."""

    W0: np.ndarray
    b0: np.ndarray
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    G0: np.ndarray
    g0: np.ndarray
    G1: np.ndarray
    g1: np.ndarray
    G2: np.ndarray
    g2: np.ndarray
    gate_inputs: np.ndarray
    Xmean: np.ndarray
    Xstd: np.ndarray
    Ymean: np.ndarray
    Ystd: np.ndarray
    provenance: str = ""
    heel_contacts: bool = True
    joint_count: int = 31
    trajectory_samples: int = 12
    # The gate also reads the phase the network carries (its cosine and sine after gate_inputs),
    # as the Neural State Machine's gate does (Starke et al. 2019); the motion network does not.
    gate_phase: bool = False
    # The share of the way each character's blend moves towards the gate's each frame in play
    # (1: the gate's own blend). A property of the network: it was chosen, or trained, with it.
    gate_ease: float = DEFAULT_GATE_EASE

    @property
    def experts(self) -> int:
        return self.W0.shape[0]

    @property
    def input_size(self) -> int:
        return self.W0.shape[2]

    @property
    def output_size(self) -> int:
        return self.W2.shape[1]

    def with_phase_in_gate(self) -> "MannWeights":
        """These weights with a gate that reads the phase and gives it no weight: the first gate
        layer gains zero columns for the phase's cosine and sine, so the network plays as before
        and fine-tuning lets the phase in only as far as training pulls it."""
        if self.gate_phase:
            return self
        G0 = np.asarray(self.G0)
        widened = np.concatenate([G0, np.zeros((G0.shape[0], PHASE_GATE_INPUTS), G0.dtype)], axis=1)
        return dataclasses.replace(self, G0=widened, gate_phase=True)

    def expert_layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return [(self.W0, self.b0), (self.W1, self.b1), (self.W2, self.b2)]

    def gate_layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return [(self.G0, self.g0), (self.G1, self.g1), (self.G2, self.g2)]

    def validate(self, source: str | Path = "<weights>") -> None:
        """Shapes agree across layers and with the normalisation; every value is finite."""
        experts = self.W0.shape[0] if self.W0.ndim == 3 else 0
        previous = self.Xmean.shape[0]
        for name, (w, b) in zip(("W0", "W1", "W2"), self.expert_layers()):
            if w.ndim != 3 or w.shape[0] != experts or b.shape != (experts, w.shape[1]):
                raise WeightsError(f"{name} has shape {w.shape} and its biases {b.shape}: expected "
                                   f"({experts}, out, in) and ({experts}, out)", source)
            if w.shape[2] != previous:
                raise WeightsError(f"{name} takes {w.shape[2]} inputs but the layer before gives {previous}", source)
            previous = w.shape[1]
        if previous != self.Ymean.shape[0]:
            raise WeightsError(f"W2 gives {previous} outputs but Ymean has {self.Ymean.shape[0]}", source)
        index = np.asarray(self.gate_inputs)
        if index.ndim != 1 or index.size == 0 or index.min() < 0 or index.max() >= self.Xmean.shape[0]:
            raise WeightsError(f"gate_inputs must index the {self.Xmean.shape[0]} inputs", source)
        previous = index.size + (PHASE_GATE_INPUTS if self.gate_phase else 0)
        for name, (w, b) in zip(("G0", "G1", "G2"), self.gate_layers()):
            if w.ndim != 2 or b.shape != (w.shape[0],) or w.shape[1] != previous:
                raise WeightsError(f"gate layer {name} has shape {w.shape} (biases {b.shape}); "
                                   f"it should take {previous} inputs", source)
            previous = w.shape[0]
        if previous != experts:
            raise WeightsError(f"the gate gives {previous} weights for {experts} experts", source)
        for name, size in (("Xstd", self.Xmean.shape), ("Ystd", self.Ymean.shape)):
            if getattr(self, name).shape != size:
                raise WeightsError(f"{name} has shape {getattr(self, name).shape}, expected {size}", source)
        for name in EXPERT_LAYERS + GATE_LAYERS + NORMALISATION:
            array = getattr(self, name)
            if not np.all(np.isfinite(array)):
                raise WeightsError(f"{name} holds {int(np.count_nonzero(~np.isfinite(array)))} NaN or "
                                   "infinite values", source)
        if np.any(self.Xstd == 0) or np.any(self.Ystd == 0):
            raise WeightsError("Xstd or Ystd holds zeros (division by zero when normalising)", source)
        if not 0.0 < self.gate_ease <= 1.0:
            raise WeightsError(f"gate_ease is {self.gate_ease:g}: the share of the way the experts' blend "
                               "moves towards the gate's each frame must lie in (0, 1]", source)


def save_mann(weights: MannWeights, path: str | Path, experts_dtype=np.float16, kind: str = KIND) -> None:
    """The project's .npz with kind "mann" (or another gated mixture of experts' `kind`, such as
    "deepphase"); the experts stored as `experts_dtype` (float16 halves the file; the runtime
    computes in float32 either way)."""
    from .weights import npz_header

    weights.validate(path)
    arrays = {name: np.ascontiguousarray(getattr(weights, name), dtype=experts_dtype if name[0] == "W" else np.float32)
              for name in EXPERT_LAYERS + GATE_LAYERS + NORMALISATION}
    extra = {"gate_phase": np.bool_(True)} if weights.gate_phase else {}
    if weights.gate_ease != DEFAULT_GATE_EASE:     # absent otherwise: files made before it stay as they were
        extra["gate_ease"] = np.float64(weights.gate_ease)
    np.savez_compressed(path, **npz_header(weights, kind),
                        gate_inputs=np.asarray(weights.gate_inputs, np.int64), **extra, **arrays)


def mann_from_arrays(contents: dict, path: Path) -> MannWeights:
    """MannWeights from the arrays of a .npz of kind "mann" or "deepphase" (weights.read_npz_arrays)."""
    missing = [key for key in EXPERT_LAYERS + GATE_LAYERS + NORMALISATION + ("gate_inputs",) if key not in contents]
    if missing:
        raise WeightsError(f"missing arrays {', '.join(missing)} (a mode-adaptive network needs them)", path)
    weights = MannWeights(
        **{key: np.ascontiguousarray(contents[key], dtype=np.float32)
           for key in EXPERT_LAYERS + GATE_LAYERS + NORMALISATION},
        gate_inputs=np.asarray(contents["gate_inputs"], np.int64),
        provenance=str(contents.get("provenance", "")),
        heel_contacts=bool(contents.get("heel_contacts", True)),
        joint_count=int(contents.get("joint_count", 31)),
        trajectory_samples=int(contents.get("trajectory_samples", 12)),
        gate_phase=bool(contents.get("gate_phase", False)),
        gate_ease=_scalar(contents, "gate_ease", DEFAULT_GATE_EASE, path))
    weights.validate(path)
    return weights


def _scalar(contents: dict, key: str, default: float, path: Path) -> float:
    if key not in contents:
        return default
    value = np.asarray(contents[key])
    if value.shape != () or value.dtype.kind not in "fiu":
        raise WeightsError(f"{key} must be one number (it holds {value.dtype} of shape {value.shape})", path)
    return float(value)


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


class ModeAdaptiveNetwork:
    """Evaluate a MANN: `predict_batch(x)` maps un-normalised inputs (N, 342) to un-normalised
    outputs (N, 311); `gate_weights` holds the experts' blend of the last call (N, K).

    Each motion layer stacks its K experts into one (K*out, in) matrix: one product over the
    batch gives every expert's output (N, K, out), which the gate blends per character. That is
    the PFNN runtime's trick, and it is cheaper than blending K weight matrices per character
    (K*out*in multiply-adds per character either way, but one pass over the weights per call).
    """

    kind = KIND
    title = "MANN"
    modes: tuple[str, ...] = ()     # no phase function to sample: one way to evaluate
    mode = None

    def __init__(self, weights: MannWeights, mode: str | None = None):
        self.set_mode(mode)
        self.weights = weights
        self._x_mean, self._x_scale, self._y_mean, self._y_std = normalisation_arrays(weights)
        self._gate_inputs = np.asarray(weights.gate_inputs, np.int64)
        self._gate = [(np.ascontiguousarray(w.T, np.float32), b.astype(np.float32)) for w, b in weights.gate_layers()]
        self._experts = []
        for w, b in weights.expert_layers():
            experts, out, inputs = w.shape
            stacked = np.ascontiguousarray(w.reshape(experts * out, inputs).T, np.float32)   # (in, K*out)
            self._experts.append((stacked, b.astype(np.float32), experts, out))
        self.gate_weights = np.zeros((1, weights.experts), np.float32)

    @property
    def experts(self) -> int:
        return self.weights.experts

    @property
    def input_size(self) -> int:
        return self.weights.input_size

    @property
    def output_size(self) -> int:
        return self.weights.output_size

    def set_mode(self, mode: str | None) -> None:
        if mode is not None:
            raise ValueError(f"a mode-adaptive network has no modes (given {mode!r}): its experts are "
                             "blended by its gate")

    @property
    def gate_phase(self) -> bool:
        """Whether the gate reads the carried phase beside its inputs."""
        return self.weights.gate_phase

    @property
    def gate_ease(self) -> float:
        """How far each character's blend moves towards the gate's each frame in play."""
        return self.weights.gate_ease

    def gate(self, x_normalised: np.ndarray, phase: np.ndarray | None = None) -> np.ndarray:
        """(N, 342) normalised inputs (and, for a gate that reads it, the phase (N,) in radians)
        -> (N, K) expert weights (softmax)."""
        hidden = x_normalised[:, self._gate_inputs]
        if self.gate_phase:
            if phase is None:
                raise ValueError("this MANN's gate reads the phase: give one per character")
            phase = np.asarray(phase, np.float32).reshape(-1, 1)
            hidden = np.concatenate([hidden, np.cos(phase), np.sin(phase)], axis=1)
        last = len(self._gate) - 1
        for depth, (w, b) in enumerate(self._gate):
            hidden = hidden @ w + b
            if depth < last:
                hidden = elu(hidden)
        return softmax(hidden)

    def predict_batch(self, x: np.ndarray, phase: np.ndarray | None = None, blend_from: np.ndarray | None = None,
                      ease: float = 1.0) -> np.ndarray:
        """Many inputs (N, input_size) -> outputs (N, output_size); the experts' blend of each
        row is left in `gate_weights`. `phase` (N,) radians is read only by a gate that reads it.
        With `blend_from` (N, K), the last blend of each row, the blend moves only `ease` of the
        way from it to the gate's (rows of NaN take the gate's)."""
        x = np.atleast_2d(np.asarray(x, dtype=np.float32))
        hidden = (x - self._x_mean) * self._x_scale
        blend = self.gate(hidden, phase).astype(np.float32)
        if blend_from is not None and ease < 1.0:
            eased = blend_from + np.float32(ease) * (blend - blend_from)
            blend = np.where(np.isnan(blend_from), blend, eased)
        self.gate_weights = blend
        last = len(self._experts) - 1
        for depth, (stacked, biases, experts, out) in enumerate(self._experts):
            products = (hidden @ stacked).reshape(len(hidden), experts, out)
            hidden = np.einsum("nk,nko->no", blend, products) + blend @ biases
            if depth < last:
                hidden = elu(hidden)
        return hidden * self._y_std + self._y_mean

    def predict(self, x: np.ndarray, phase: float | None = None) -> np.ndarray:
        """One input (input_size,) (and the phase, for a gate that reads it) -> a new output (output_size,)."""
        return self.predict_batch(np.asarray(x)[None], None if phase is None else np.array([phase]))[0]

    @property
    def nbytes(self) -> dict[str, int]:
        total = sum(s.nbytes + b.nbytes for s, b, _, _ in self._experts) + sum(w.nbytes + b.nbytes
                                                                               for w, b in self._gate)
        return {"mode_tables": 0, "control_points": total, "total": total}


def predict_naive(weights: MannWeights, x: np.ndarray, phase: float | None = None) -> np.ndarray:
    """Reference evaluation straight from the paper, float64: blend each layer's expert matrices
    by the gate, then multiply. Independent of the stacked runtime above; used to check it."""
    h = (np.asarray(x, np.float64) - weights.Xmean) / weights.Xstd
    g = h[np.asarray(weights.gate_inputs)]
    if weights.gate_phase:
        g = np.concatenate([g, [math.cos(phase), math.sin(phase)]])
    for depth, (w, b) in enumerate(weights.gate_layers()):
        g = w.astype(np.float64) @ g + b
        if depth < 2:
            g = elu(g)
    blend = softmax(g)
    for depth, (w, b) in enumerate(weights.expert_layers()):
        matrix = np.tensordot(blend, w.astype(np.float64), axes=1)
        h = matrix @ h + blend @ b.astype(np.float64)
        if depth < 2:
            h = elu(h)
    return h * weights.Ystd + weights.Ymean
