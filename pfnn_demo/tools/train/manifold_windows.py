"""The phase manifold of the training windows, for the DeepPhase controller (sim/deepphase.py).

The periodic autoencoder of a phases file (tools/phase_manifold.py) encodes every frame of every
synthesised clip, as it is windowed (after mirroring and terrain); each training row gets the
manifold at its 12 trajectory samples as extra inputs and, as extra outputs, the next frame's
manifold at its 6 future samples. Samples beyond a clip's ends carry on at the end's frequency,
as its trajectory carries on past them (database.extended_root).
"""

from __future__ import annotations

import numpy as np

from ...sim.deepphase import phase_input, phase_output, phase_vectors
from ...sim.features import FUTURE_SAMPLES, SAMPLE_STEP
from ..phase_manifold import PhaseEncoder, PhaseManifold, velocity_features
from .database import FPS, SAMPLE_OFFSETS


def turn_phase_vectors(torch, vectors, angle):
    """Phase vectors (..., 2: a sin, a cos) turned on by `angle` (...) radians, in PyTorch."""
    sin, cos = vectors.unbind(-1)
    return torch.stack([sin * torch.cos(angle) + cos * torch.sin(angle),
                        cos * torch.cos(angle) - sin * torch.sin(angle)], dim=-1)


def clip_manifold(encoder: PhaseEncoder, positions: np.ndarray) -> PhaseManifold:
    """The manifold of every frame of a clip's world joint positions (T, 31, 3)."""
    return encoder.encode(velocity_features(positions))


def manifold_at(manifold: PhaseManifold, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Phase, amplitude and frequency (frames.shape + (M,)) at frame indices that may lie past the
    clip's ends: there the end's amplitude and frequency hold and its phase turns on."""
    last = len(manifold.phase) - 1
    inside = np.clip(frames, 0, last)
    beyond = (frames - inside)[..., None] / FPS
    frequency = manifold.frequency[inside]
    phase = np.mod(manifold.phase[inside] + frequency * beyond, 1.0)
    return phase, manifold.amplitude[inside], frequency


def manifold_windows(manifold: PhaseManifold) -> tuple[np.ndarray, np.ndarray]:
    """Extra inputs (N, 24 M) and outputs (N, 24 M) for the rows database.clip_windows makes of
    the same clip (its frames 1 to T-2)."""
    frames = np.arange(1, len(manifold.phase) - 1)
    phase, amplitude, _ = manifold_at(manifold, frames[:, None] + SAMPLE_OFFSETS[None, :])
    future = frames[:, None] + 1 + SAMPLE_STEP * np.arange(FUTURE_SAMPLES)[None, :]
    next_phase, next_amplitude, next_frequency = manifold_at(manifold, future)
    return (phase_input(phase, amplitude),
            phase_output(phase_vectors(next_phase, next_amplitude), next_amplitude, next_frequency))
