"""The phase manifold of motion (DeepPhase: Starke, Mason, Komura, SIGGRAPH 2022), in NumPy.

A periodic autoencoder (`pfnn-demo train-phases`, tools/train/pae.py) reads one second of every
joint's velocity relative to the root, centred on a frame, and fits a sinusoid to each of its
M latent channels: phase (cycles), frequency (Hz), amplitude and offset. The amplitude-weighted
phase vectors (a sin 2 pi phase, a cos 2 pi phase) of all channels are the frame's point on the
phase manifold (2M values): a walk circles on it, a stop spirals to its centre.

Here: the encoder's features, the encoder itself read from a phases file (no PyTorch needed),
and how a learned phase compares with the PFNN's contact phase labels.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..errors import PfnnError
from ..sim.npz_files import read_npz
from ..sim.rotation import rotate_y
from .train.database import FPS, facing_yaw

KIND = "phases"
FORMAT_VERSION = 1
WINDOW = 61                 # samples the encoder reads, centred on a frame
# Frames from sample to sample: 61 samples every other frame span two seconds. A one-second
# window (every frame) could not tell a walk's stride (0.7-1 Hz) from its steps: its spectrum has
# a bin per hertz, and the strongest channel of walks settled at 2.9 Hz whatever their cadence.
SAMPLE_STEP = 2
ENCODE_CHUNK = 64           # windows per product: bounds the memory of the unfolded convolutions


def velocity_features(positions: np.ndarray) -> np.ndarray:
    """(T, J, 3) world joint positions at 60 fps -> (T, 3J) velocities (units/s) of the joints
    relative to the root (the hips over the ground, facing as the training windows face), in the
    root's frame: a walk's steps without its travel, the same whichever way it goes."""
    positions = np.asarray(positions, np.float64)
    yaw = np.unwrap(facing_yaw(positions))
    root = positions[:, :1] * np.array([1.0, 0.0, 1.0])
    local = rotate_y(positions - root, -yaw[:, None])
    velocity = np.gradient(local, axis=0) * FPS if len(positions) > 1 else np.zeros_like(local)
    return velocity.reshape(len(positions), -1).astype(np.float32)


def span(window: int = WINDOW, step: int = SAMPLE_STEP) -> int:
    """Frames a window covers."""
    return (window - 1) * step + 1


def padded(features: np.ndarray, window: int = WINDOW, step: int = SAMPLE_STEP) -> np.ndarray:
    """Features with their first and last frames repeated half a window on: every frame gets a
    whole window (a clip's ends are held, as a character stands before and after)."""
    half = span(window, step) // 2
    return np.pad(features, ((half, half), (0, 0)), mode="edge")


@dataclasses.dataclass
class PhaseManifold:
    """Per frame and channel: phase in cycles [0, 1), frequency in Hz, amplitude and offset
    (normalised feature units). Arrays (T, M)."""

    phase: np.ndarray
    frequency: np.ndarray
    amplitude: np.ndarray
    offset: np.ndarray

    @property
    def vectors(self) -> np.ndarray:
        """(T, 2M) the manifold: per channel a sin 2 pi phase, a cos 2 pi phase."""
        angle = 2 * np.pi * self.phase
        return np.stack([self.amplitude * np.sin(angle), self.amplitude * np.cos(angle)], axis=-1).reshape(
            len(self.phase), -1)

    def __getitem__(self, frames) -> "PhaseManifold":
        return PhaseManifold(self.phase[frames], self.frequency[frames], self.amplitude[frames], self.offset[frames])

    @staticmethod
    def concatenate(parts: list["PhaseManifold"]) -> "PhaseManifold":
        return PhaseManifold(*(np.concatenate([getattr(p, f.name) for p in parts])
                               for f in dataclasses.fields(PhaseManifold)))


ENCODER_ARRAYS = ("feature_mean", "feature_std", "conv1_weight", "conv1_bias", "conv2_weight", "conv2_bias",
                  "phase_weight", "phase_bias")


class PhaseEncoder:
    """The periodic autoencoder's encoder half, batch normalisation folded into its layers: a
    window of features -> a sinusoid per latent channel (PhaseManifold)."""

    def __init__(self, arrays: dict, step: int = SAMPLE_STEP, provenance: str = "", cache: dict | None = None):
        self.arrays = {name: np.asarray(arrays[name], np.float32) for name in ENCODER_ARRAYS}
        self.window = self.arrays["conv1_weight"].shape[2]
        self.step = int(step)
        self.channels = self.arrays["conv2_weight"].shape[0]
        self.provenance = provenance
        self.cache = cache or {}
        seconds = window_seconds(self.window, self.step)
        self.frequencies = np.fft.rfftfreq(self.window)[1:] * self.window / seconds       # Hz of each bin
        self.time = np.linspace(-seconds / 2, seconds / 2, self.window)

    @classmethod
    def load(cls, path) -> "PhaseEncoder":
        """Read a phases file; a one-line PfnnError if it is not one or is damaged."""
        path = Path(path)
        if not path.is_file():
            raise PfnnError("no such phases file", path)
        data = read_npz(path, PfnnError, "phases file")
        kind = str(data["kind"]) if "kind" in data else ""
        if kind != KIND:
            raise PfnnError(f"not a phases file (kind '{kind or 'none'}'; make one with pfnn-demo "
                            "train-phases)", path)
        missing = [name for name in ENCODER_ARRAYS if name not in data]
        if missing:
            raise PfnnError(f"phases file without {', '.join(missing)}", path)
        arrays = {name: data[name] for name in ENCODER_ARRAYS}
        cache = {name[len("cache_"):]: data[name] for name in data if name.startswith("cache_")}
        provenance = str(data["provenance"]) if "provenance" in data else ""
        try:
            step = int(data["sample_step"]) if "sample_step" in data else 1
        except (TypeError, ValueError):
            raise PfnnError("phases file: its sample step is not one whole number", path) from None
        if step < 1:
            raise PfnnError(f"phases file: sample step {step}, expected at least 1", path)
        encoder = cls(arrays, step, provenance, cache)
        encoder._check(path)
        return encoder

    def _check(self, path) -> None:
        a = self.arrays
        inputs = a["feature_mean"].shape[0]
        hidden = a["conv1_weight"].shape[0]
        expected = {"feature_std": (inputs,), "conv1_weight": (hidden, inputs, self.window), "conv1_bias": (hidden,),
                    "conv2_weight": (self.channels, hidden, self.window), "conv2_bias": (self.channels,),
                    "phase_weight": (self.channels, 2, self.window), "phase_bias": (self.channels, 2)}
        for name, shape in expected.items():
            if a[name].shape != shape:
                raise PfnnError(f"phases file: {name} has shape {a[name].shape}, expected {shape}", path)
        if not all(np.all(np.isfinite(v)) for v in a.values()):
            raise PfnnError("phases file holds NaN or infinite weights", path)

    @property
    def inputs(self) -> int:
        return self.arrays["feature_mean"].shape[0]

    def encode(self, features: np.ndarray) -> PhaseManifold:
        """(T, inputs) features of one clip (velocity_features) -> its PhaseManifold, a window
        centred on every frame."""
        features = np.asarray(features, np.float32)
        if features.ndim != 2 or features.shape[1] != self.inputs:
            raise PfnnError(f"the encoder reads {self.inputs} features per frame, not {features.shape[1:]}")
        a = self.arrays
        normalised = (padded(features, self.window, self.step) - a["feature_mean"]) / a["feature_std"]
        windows = sliding_window_view(normalised, span(self.window, self.step), axis=0)[..., ::self.step]
        parts = [self._encode_windows(windows[start:start + ENCODE_CHUNK])
                 for start in range(0, len(windows), ENCODE_CHUNK)]
        return PhaseManifold.concatenate(parts)

    def _encode_windows(self, x: np.ndarray) -> PhaseManifold:
        a = self.arrays
        hidden = np.tanh(_convolve(x, a["conv1_weight"], a["conv1_bias"]))
        latent = _convolve(hidden, a["conv2_weight"], a["conv2_bias"])           # (B, M, window)
        frequency, amplitude, offset = spectrum(latent, self.frequencies)
        v = np.einsum("bmt,mkt->bmk", latent, a["phase_weight"]) + a["phase_bias"]
        phase = np.mod(np.arctan2(v[..., 1], v[..., 0]) / (2 * np.pi), 1.0)
        return PhaseManifold(phase, frequency, amplitude, offset)


def cached_manifold(encoder: PhaseEncoder, name: str) -> PhaseManifold | None:
    """The manifold a phases file caches for clip `name`, or None."""
    cache = encoder.cache
    if "names" not in cache:
        return None
    names = [str(n) for n in cache["names"]]
    if name not in names:
        return None
    k = names.index(name)
    start = int(np.sum(cache["frames"][:k]))
    frames = slice(start, start + int(cache["frames"][k]))
    return PhaseManifold(*(cache[field][frames] for field in ("phase", "frequency", "amplitude", "offset")))


def window_seconds(window: int, step: int) -> float:
    """Seconds from a window's first sample to its last: the time axis of its sinusoids."""
    return (window - 1) * step / FPS


def _convolve(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """A 1D convolution keeping the length (zero padding), as torch's Conv1d with padding k // 2:
    x (B, C, T), weight (O, C, K) -> (B, O, T)."""
    half = weight.shape[2] // 2
    columns = sliding_window_view(np.pad(x, ((0, 0), (0, 0), (half, half))), weight.shape[2], axis=2)   # (B, C, T, K)
    return np.einsum("bctk,ock->bot", columns, weight, optimize=True) + bias[:, None]


def spectrum(latent: np.ndarray, frequencies: np.ndarray):
    """The DeepPhase FFT layer on (B, M, window) latent curves: the power-weighted mean frequency
    (without the constant term), the amplitude, and the offset (the constant term)."""
    window = latent.shape[-1]
    transform = np.fft.rfft(latent, axis=-1)
    power = np.abs(transform[..., 1:]) ** 2
    total = np.maximum(power.sum(axis=-1), 1e-12)
    frequency = (power * frequencies).sum(axis=-1) / total
    amplitude = 2 * np.sqrt(power.sum(axis=-1)) / window
    offset = transform[..., 0].real / window
    return frequency, amplitude, offset


# -- comparing with the PFNN's contact phase ---------------------------------------------------

def stride_frequency(phase_labels: np.ndarray, frames: np.ndarray | None = None) -> float:
    """Strides (gait cycles) per second of a clip's contact phase labels (cycles, from its foot
    strikes): the mean advance over the frames between strikes, where the labels run (they hold
    before the first strike and after the last), among `frames` (default all); NaN over less than
    a whole stride."""
    advance = np.mod(np.diff(np.asarray(phase_labels, np.float64)), 1.0)
    running = advance > 1e-9
    if frames is not None:
        running &= np.asarray(frames, bool)[1:]
    if advance[running].sum() < 1.0:    # less than a whole stride: no cadence to speak of
        return float("nan")
    return float(np.mean(advance[running]) * FPS)


def locking(learned: np.ndarray, labelled: np.ndarray, ratio: int) -> tuple[float, float]:
    """How a learned phase follows `ratio` times a labelled phase (both in cycles): the length of
    the mean unit vector of their difference (1: a fixed offset, locked; 0: unrelated) and that
    mean offset in cycles."""
    difference = 2 * np.pi * (np.asarray(learned, np.float64) - ratio * np.asarray(labelled, np.float64))
    mean = np.mean(np.exp(1j * difference))
    return float(np.abs(mean)), float(np.mod(np.angle(mean) / (2 * np.pi), 1.0))


def correspondence(manifold: PhaseManifold, phase_labels: np.ndarray, moving: np.ndarray) -> dict:
    """The strongest channel on the `moving` frames against the contact phase: its frequency, the
    stride frequency from the labels, their whole-number ratio (1: a cycle per stride, 2: per
    step), and how closely the channel's phase follows the labels at that ratio."""
    moving = np.asarray(moving, bool)
    strongest = int(np.argmax(manifold.amplitude[moving].mean(axis=0)))
    learned = float(np.median(manifold.frequency[moving, strongest]))
    stride = stride_frequency(phase_labels, moving)
    ratio = max(1, int(round(learned / stride))) if stride > 0 else 1     # NaN stride: ratio 1
    lock, offset = locking(manifold.phase[moving, strongest], phase_labels[moving], ratio)
    return {"channel": strongest, "frequency": learned, "stride frequency": stride, "ratio": ratio,
            "locking": lock, "offset": offset}
