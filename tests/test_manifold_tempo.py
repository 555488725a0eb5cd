"""Tempo noise on a DeepPhase controller's phase manifold inputs (tools/train/manifold_tempo.py)."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.sim import deepphase
from pfnn_demo.sim.features import INPUT_SIZE, OUTPUT_SIZE


def test_the_manifold_plays_at_another_tempo_with_its_phase_now_and_its_amplitudes_kept():
    """Each window's manifold is turned by (s - 1) f t cycles at the sample t seconds from now:
    the phase now and every amplitude stay, the pace the samples show is s times the captured
    one, and all else in the window is left alone."""
    torch = pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.tools.train.manifold_tempo import ManifoldTempo

    channels, count = 2, 500
    rng = np.random.default_rng(3)
    frequency = rng.uniform(0.5, 3.0, (count, channels)).astype(np.float32)
    phase_now = rng.uniform(0, 1, (count, 1, channels))
    amplitude = rng.uniform(0.1, 2.0, (count, 1, channels))
    seconds = (np.arange(12) - 6) / 6.0      # the trajectory samples, 10 frames apart, now the 7th
    phases = phase_now + frequency[:, None, :] * seconds[None, :, None]           # a steady captured pace
    X = rng.normal(size=(count, INPUT_SIZE + deepphase.phase_input_size(channels))).astype(np.float32)
    X[:, INPUT_SIZE:] = deepphase.phase_input(phases, np.broadcast_to(amplitude, phases.shape))
    Y = rng.normal(size=(count, OUTPUT_SIZE + deepphase.phase_output_size(channels))).astype(np.float32)
    Y[:, -deepphase.FUTURE_SAMPLES * channels:] = np.repeat(frequency[:, None, :], deepphase.FUTURE_SAMPLES, 1).reshape(count, -1)
    norm = (X.mean(0), X.std(0) + 0.1, Y.mean(0), Y.std(0) + 0.1)
    tempo = ManifoldTempo(torch, norm, channels, 0.2, "cpu")
    Xn, Yn = (torch.as_tensor((a - m) / s) for a, m, s in ((X, norm[0], norm[1]), (Y, norm[2], norm[3])))
    warped = tempo(torch, Xn, Yn).numpy() * norm[1] + norm[0]

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
