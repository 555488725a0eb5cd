"""The DeepPhase controller (Starke, Mason, Komura, SIGGRAPH 2022) for the biped: its extra inputs
and outputs, its runtime and how it moves through the phase manifold.

The network is the MANN's gated mixture of experts (mann.py) with the gate fed by the phase
manifold (beside the MANN's few chosen inputs, gate_inputs). Beside the PFNN's 342 inputs it reads the manifold at the 12
trajectory samples (per channel the amplitude-weighted phase vector a sin 2 pi phase,
a cos 2 pi phase: past samples from what it played, future ones from its last prediction);
beside the 311 outputs it predicts, for the next frame's 6 samples from now on, each channel's
phase vector, amplitude and frequency. The phase then moves as the paper moves it: rotated by
the predicted frequency over one tick, and blended halfway with the predicted vector.

The state a character carries (`manifold`, (N, MANIFOLD_FRAMES, M, 3): phase in cycles,
amplitude, frequency) holds the last 60 frames and now, then the 5 predicted samples 10 to 50
frames ahead.
"""

from __future__ import annotations

import numpy as np

from .features import FUTURE_SAMPLES, INPUT_SIZE, OUTPUT_SIZE, SAMPLE_STEP, SAMPLES
from .mann import GATE_INPUTS as MANN_GATE_INPUTS, ModeAdaptiveNetwork

KIND = "deepphase"
TICK = 1.0 / 60.0
NOW = (SAMPLES // 2) * SAMPLE_STEP                  # the current frame's row in the state: 60
MANIFOLD_FRAMES = NOW + 1 + FUTURE_SAMPLES - 1       # 60 past frames, now, 5 future samples
# The state's rows of the 12 trajectory samples: every 10th past frame, now, the future samples.
SAMPLE_ROWS = np.concatenate([np.arange(0, NOW + 1, SAMPLE_STEP), np.arange(NOW + 1, MANIFOLD_FRAMES)])
PHASE, AMPLITUDE, FREQUENCY = range(3)
UPDATE_BLEND = 0.5      # the paper's: halfway between the rotated phase and the predicted one
assert len(SAMPLE_ROWS) == SAMPLES


def phase_input_size(channels: int) -> int:
    """Inputs after the PFNN's 342: a phase vector per channel per trajectory sample."""
    return SAMPLES * channels * 2


def phase_output_size(channels: int) -> int:
    """Outputs after the PFNN's 311: vector (2), amplitude, frequency per channel per future sample."""
    return FUTURE_SAMPLES * channels * 4


def channels_of(input_size: int, output_size: int) -> int:
    """The phase channels a network of these sizes carries; ValueError if the sizes disagree."""
    extra_in, extra_out = input_size - INPUT_SIZE, output_size - OUTPUT_SIZE
    if extra_in <= 0 or extra_in % (2 * SAMPLES):
        raise ValueError(f"a DeepPhase network takes {INPUT_SIZE} inputs and 24 per phase channel; "
                         f"this one takes {input_size}")
    channels = extra_in // (2 * SAMPLES)
    if extra_out != phase_output_size(channels):
        raise ValueError(f"a DeepPhase network of {channels} phase channels gives "
                         f"{OUTPUT_SIZE + phase_output_size(channels)} outputs; this one gives {output_size}")
    return channels


def phase_vectors(phase: np.ndarray, amplitude: np.ndarray) -> np.ndarray:
    """(..., M) phases (cycles) and amplitudes -> (..., M, 2): a sin 2 pi phase, a cos 2 pi phase."""
    angle = 2 * np.pi * phase
    return np.stack([amplitude * np.sin(angle), amplitude * np.cos(angle)], axis=-1)


def phase_input(samples_phase: np.ndarray, samples_amplitude: np.ndarray) -> np.ndarray:
    """The extra inputs (N, 12 * M * 2) from the manifold at the 12 trajectory samples (N, 12, M)
    each: sample-major, then channel, then (sin, cos). The one writer, for the runtime and the
    training database."""
    vectors = phase_vectors(samples_phase, samples_amplitude)
    return vectors.reshape(len(vectors), -1).astype(np.float32)


def phase_output(vectors: np.ndarray, amplitude: np.ndarray, frequency: np.ndarray) -> np.ndarray:
    """The extra outputs (N, 6 * M * 4) from the next frame's 6 future samples' phase vectors
    (N, 6, M, 2), amplitudes and frequencies (N, 6, M): vectors, then amplitudes, then frequencies."""
    count = len(vectors)
    return np.concatenate([vectors.reshape(count, -1), amplitude.reshape(count, -1),
                           frequency.reshape(count, -1)], axis=1).astype(np.float32)


def read_phase_output(y: np.ndarray, channels: int) -> dict[str, np.ndarray]:
    """Named views of the extra outputs of y (N, 311 + 24 M)."""
    count, extra = len(y), y[:, OUTPUT_SIZE:]
    vectors = FUTURE_SAMPLES * channels * 2
    per_sample = FUTURE_SAMPLES * channels
    return {"vectors": extra[:, :vectors].reshape(count, FUTURE_SAMPLES, channels, 2),
            "amplitude": extra[:, vectors:vectors + per_sample].reshape(count, FUTURE_SAMPLES, channels),
            "frequency": extra[:, vectors + per_sample:].reshape(count, FUTURE_SAMPLES, channels)}


def output_groups(channels: int) -> list[slice]:
    """Slices of the full output that share a normalisation: vectors, amplitudes, frequencies."""
    vectors, per_sample = FUTURE_SAMPLES * channels * 2, FUTURE_SAMPLES * channels
    start = OUTPUT_SIZE
    return [slice(start, start + vectors), slice(start + vectors, start + vectors + per_sample),
            slice(start + vectors + per_sample, start + vectors + 2 * per_sample)]


def manifold_inputs(channels: int) -> np.ndarray:
    """The indices of the phase manifold inputs."""
    return np.arange(INPUT_SIZE, INPUT_SIZE + phase_input_size(channels), dtype=np.int64)


def gate_inputs(channels: int) -> np.ndarray:
    """What the gate reads: the phase manifold along the trajectory, all of it, and the MANN's
    choice of inputs (the end effectors' velocities, the target velocity and facing, the gait).
    The paper's gate reads the manifold alone; with the project's few minutes of capture, a gate
    that could not see how fast the stick asks to go walked at 58 % of the asked speed."""
    return np.concatenate([MANN_GATE_INPUTS, manifold_inputs(channels)])


def manifold_input(manifold: np.ndarray) -> np.ndarray:
    """The extra inputs of characters in state `manifold` (N, MANIFOLD_FRAMES, M, 3)."""
    samples = manifold[:, SAMPLE_ROWS]
    return phase_input(samples[..., PHASE], samples[..., AMPLITUDE])


def advance_manifold(manifold: np.ndarray, predicted: dict[str, np.ndarray],
                     moving: np.ndarray | float = 1.0) -> None:
    """Move the characters' manifold (N, MANIFOLD_FRAMES, M, 3) on by one tick, in place: the past
    shifts by a frame; now and the future samples become their previous values rotated by the
    predicted frequency over a tick, blended halfway with the predicted phase vectors (DeepPhase's
    update, which keeps the phase turning smoothly where a prediction alone would wobble), at the
    predicted amplitudes and frequencies.

    `moving` (N,) is the crowd's stand amount, 1 while the trajectory moves and 0 once it stands
    (the PFNN's phase slows by it). The predicted amplitudes are scaled by 0.1 + 0.9 `moving`: the
    network is fed the amplitudes it predicted, and a network that predicts about the amplitude it
    is given keeps a walk's amplitudes through a stand (0.3 to 1.4 a second after the stick is
    released, where the data's settled stands have 0.02 to 0.05), and with them a stepping pose."""
    settle = (np.float32(0.1) + np.float32(0.9) * np.asarray(moving, np.float32)).reshape(-1, 1, 1)
    frequency = np.maximum(predicted["frequency"], 0.0)
    amplitude = np.maximum(predicted["amplitude"], 0.0) * settle
    previous = manifold[:, NOW:, :, PHASE] + frequency * TICK
    rotated = phase_vectors(previous, 1.0)
    vectors = predicted["vectors"]
    length = np.linalg.norm(vectors, axis=-1, keepdims=True)
    direction = np.where(length > 1e-6, vectors / np.maximum(length, 1e-6), rotated)
    blended = (1 - UPDATE_BLEND) * rotated + UPDATE_BLEND * direction
    # Opposite vectors cancel: keep the rotated phase there rather than an arbitrary angle.
    blended = np.where(np.linalg.norm(blended, axis=-1, keepdims=True) > 1e-6, blended, rotated)
    phase = np.mod(np.arctan2(blended[..., 0], blended[..., 1]) / (2 * np.pi), 1.0)
    manifold[:, :NOW] = manifold[:, 1:NOW + 1]
    manifold[:, NOW:, :, PHASE] = phase
    manifold[:, NOW:, :, AMPLITUDE] = amplitude
    manifold[:, NOW:, :, FREQUENCY] = frequency


class DeepPhaseNetwork(ModeAdaptiveNetwork):
    """A DeepPhase controller's network: the MANN runtime (its experts stacked into one product
    per layer, blended per character by the gate) over inputs (N, 342 + 24 M) and outputs
    (N, 311 + 24 M), the gate reading the phase manifold (and the MANN's few inputs)."""

    kind = KIND
    title = "DeepPhase"

    def __init__(self, weights, mode: str | None = None):
        self.channels = channels_of(weights.input_size, weights.output_size)
        manifold = manifold_inputs(self.channels)
        if not np.all(np.isin(manifold, np.asarray(weights.gate_inputs))):
            raise ValueError("a DeepPhase network's gate reads the phase manifold inputs "
                             f"({manifold[0]} to {manifold[-1]}), this one's does not")
        super().__init__(weights, mode)

    def set_mode(self, mode: str | None) -> None:
        if mode is not None:
            raise ValueError(f"a DeepPhase network has no modes (given {mode!r}): its experts are "
                             "blended by its gate on the phase manifold")

    def typical_amplitudes(self) -> np.ndarray:
        """(M,) each channel's mean predicted amplitude now, from the output normalisation: a
        scale for drawing the manifold."""
        mean = self.weights.Ymean[None].astype(np.float32)
        return np.maximum(read_phase_output(mean, self.channels)["amplitude"][0, 0], 1e-6)
