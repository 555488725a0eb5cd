"""Tempo and amplitude noise on a DeepPhase controller's phase manifold inputs.

In training, the manifold along the trajectory is the captured one: it moves at the pace of the
very motion the outputs hold, and the network can read the pace from it rather than from the
trajectory. In play it is the network's own. Here every window's manifold inputs are played at
another tempo, each channel's phase at the sample t seconds from now turned by (s - 1) f t
cycles (f its frequency now, s drawn per window around 1), while the outputs stay captured: the
phase now is right, the pace the manifold shows is not. The frequency the network predicts in
play then follows the manifold's pace less and the trajectory more.

Amplitude noise scales each window's channels by factors of their own around 1 (the phases and
the outputs stay): in play the network is fed the amplitudes it predicted, and with the tempo
noise alone they settled at half the captured walks'. The shipped controller's second step is
one epoch with both (tempo 0.2, amplitude 0.5; scripts/train_deepphase.sh): with them it meets
more bars than without (docs/controllers.md, Training DeepPhase). The recipe that trains from
scratch takes neither.
"""

from __future__ import annotations

import numpy as np

from ...sim.deepphase import TICK, output_groups, phase_input_size
from ...sim.features import INPUT_SIZE, SAMPLE_STEP, SAMPLES
from .manifold_windows import turn_phase_vectors


class ManifoldNoise:
    """Tempo noise of standard deviation `tempo` (0.2: the manifold runs 20 % fast or slow) and
    amplitude noise of standard deviation `amplitude` (of the log of each channel's factor) on
    normalised inputs, for a network of `channels` phase channels."""

    def __init__(self, torch, normalisation, channels: int, tempo: float, device: str, amplitude: float = 0.0):
        x_mean, x_std, y_mean, y_std = normalisation
        t = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float32).to(device)   # noqa: E731
        self.channels, self.tempo, self.amplitude = channels, tempo, amplitude
        self.columns = slice(INPUT_SIZE, INPUT_SIZE + phase_input_size(channels))
        self.in_mean, self.in_std = t(x_mean[self.columns]), t(x_std[self.columns])
        # The frequency outputs of the next frame's sample now (the first of the frequencies): the
        # pace of each channel.
        start = output_groups(channels)[2].start
        self.frequency = slice(start, start + channels)
        self.out_mean, self.out_std = t(y_mean[self.frequency]), t(y_std[self.frequency])
        self.seconds = t((np.arange(SAMPLES) - SAMPLES // 2) * SAMPLE_STEP * TICK)     # (12,) -1 s ... 5/6 s, 0 now

    def __call__(self, torch, inputs, outputs):
        """Normalised inputs (B, in) with their manifold at another tempo and amplitude, from the
        normalised captured outputs (B, out) that give each channel's frequency."""
        count = len(inputs)
        vectors = (inputs[:, self.columns] * self.in_std + self.in_mean).reshape(count, len(self.seconds),
                                                                                 self.channels, 2)
        if self.tempo > 0:
            frequency = torch.relu(outputs[:, self.frequency] * self.out_std + self.out_mean)        # (B, M)
            tempo = self.tempo * torch.randn(count, 1, 1, device=inputs.device)
            angle = 2 * np.pi * tempo * frequency[:, None, :] * self.seconds[None, :, None]          # (B, 12, M)
            vectors = turn_phase_vectors(torch, vectors, angle)
        if self.amplitude > 0:
            vectors = vectors * torch.exp(self.amplitude * torch.randn(count, 1, self.channels, 1,
                                                                       device=inputs.device))
        warped = inputs.clone()
        warped[:, self.columns] = (vectors.reshape(count, -1) - self.in_mean) / self.in_std
        return warped
