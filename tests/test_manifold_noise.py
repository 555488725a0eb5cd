"""Tempo and amplitude noise on a DeepPhase controller's phase manifold inputs
(tools/train/manifold_noise.py)."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.sim import deepphase
from pfnn_demo.sim.features import INPUT_SIZE, OUTPUT_SIZE

SECONDS = (np.arange(12) - 6) / 6.0      # the trajectory samples, 10 frames apart, now the 7th


def steady_windows(channels: int, count: int):
    """Training rows (X, Y) whose manifold turns at a steady captured pace (the frequency outputs),
    random elsewhere, their normalisation, and the phase now (count, 1, M), amplitudes (count, 1,
    M) and frequencies (count, M)."""
    rng = np.random.default_rng(3)
    frequency = rng.uniform(0.5, 3.0, (count, channels)).astype(np.float32)
    phase_now = rng.uniform(0, 1, (count, 1, channels))
    amplitude = rng.uniform(0.1, 2.0, (count, 1, channels))
    phases = phase_now + frequency[:, None, :] * SECONDS[None, :, None]           # a steady captured pace
    X = rng.normal(size=(count, INPUT_SIZE + deepphase.phase_input_size(channels))).astype(np.float32)
    X[:, INPUT_SIZE:] = deepphase.phase_input(phases, np.broadcast_to(amplitude, phases.shape))
    Y = rng.normal(size=(count, OUTPUT_SIZE + deepphase.phase_output_size(channels))).astype(np.float32)
    Y[:, -deepphase.FUTURE_SAMPLES * channels:] = np.repeat(frequency[:, None, :], deepphase.FUTURE_SAMPLES, 1).reshape(count, -1)
    norm = (X.mean(0), X.std(0) + 0.1, Y.mean(0), Y.std(0) + 0.1)
    return X, Y, norm, phase_now, amplitude, frequency


def noisy(torch, noise, X, Y, norm):
    """The un-normalised inputs X after `noise` (ManifoldNoise) on their normalised rows."""
    Xn, Yn = (torch.as_tensor((a - m) / s) for a, m, s in ((X, norm[0], norm[1]), (Y, norm[2], norm[3])))
    return noise(torch, Xn, Yn).numpy() * norm[1] + norm[0]


def test_the_manifold_plays_at_another_tempo_with_its_phase_now_and_its_amplitudes_kept():
    """Each window's manifold is turned by (s - 1) f t cycles at the sample t seconds from now:
    the phase now and every amplitude stay, the pace the samples show is s times the captured
    one, and all else in the window is left alone."""
    torch = pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.tools.train.manifold_noise import ManifoldNoise

    channels, count = 2, 500
    X, Y, norm, phase_now, amplitude, frequency = steady_windows(channels, count)
    phases = phase_now + frequency[:, None, :] * SECONDS[None, :, None]
    warped = noisy(torch, ManifoldNoise(torch, norm, channels, 0.2, "cpu"), X, Y, norm)

    assert np.allclose(warped[:, :INPUT_SIZE], X[:, :INPUT_SIZE], atol=1e-4)
    vectors = warped[:, INPUT_SIZE:].reshape(count, deepphase.SAMPLES, channels, 2)
    assert np.allclose(np.linalg.norm(vectors, axis=-1), np.broadcast_to(amplitude, phases.shape), atol=1e-3)
    angle = np.arctan2(vectors[..., 0], vectors[..., 1]) / (2 * np.pi)
    now = 6
    assert np.allclose(np.mod(angle[:, now] - phase_now[:, 0] + 0.5, 1) - 0.5, 0, atol=1e-4)
    # the pace between now and the first future sample, against the captured pace
    step = np.mod(angle[:, now + 1] - angle[:, now], 1) / (1 / 6)
    factor = step / frequency
    steady = frequency < 2.5       # under a whole turn in a sixth of a second either way
    assert 0.12 < np.std(factor[steady]) < 0.28 and abs(np.mean(factor[steady]) - 1) < 0.05
    # one tempo per window, shared by its channels
    both = steady.all(axis=1)
    assert np.allclose(factor[both, 0], factor[both, 1], atol=1e-2)


def test_amplitude_noise_scales_each_windows_channels_and_keeps_their_phases():
    """Each window's channels are scaled by their own factor, the same at every sample, its log of
    the asked spread; every phase and all else in the window stay."""
    torch = pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.tools.train.manifold_noise import ManifoldNoise

    channels, count = 3, 2000
    X, Y, norm, phase_now, amplitude, frequency = steady_windows(channels, count)
    phases = phase_now + frequency[:, None, :] * SECONDS[None, :, None]
    warped = noisy(torch, ManifoldNoise(torch, norm, channels, 0.0, "cpu", amplitude=0.3), X, Y, norm)

    assert np.allclose(warped[:, :INPUT_SIZE], X[:, :INPUT_SIZE], atol=1e-4)
    vectors = warped[:, INPUT_SIZE:].reshape(count, deepphase.SAMPLES, channels, 2)
    angle = np.arctan2(vectors[..., 0], vectors[..., 1]) / (2 * np.pi)
    assert np.allclose(np.mod(angle - phases + 0.5, 1) - 0.5, 0, atol=1e-4)
    factor = np.linalg.norm(vectors, axis=-1) / amplitude
    assert np.allclose(factor, factor[:, :1], rtol=1e-3)          # one factor per window and channel
    log = np.log(factor[:, 0])
    assert 0.27 < log.std() < 0.33 and abs(log.mean()) < 0.03
    assert abs(np.corrcoef(log[:, 0], log[:, 1])[0, 1]) < 0.1     # the channels' own
