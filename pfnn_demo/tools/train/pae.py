"""The periodic autoencoder (PAE) of DeepPhase (Starke, Mason, Komura, SIGGRAPH 2022) in PyTorch:
`pfnn-demo train-phases`.

A window of joint velocities (tools/phase_manifold.velocity_features, one second around a frame)
goes through a 1D-convolutional encoder to M latent curves. A differentiable FFT gives each
curve's frequency (the power-weighted mean of its spectrum), amplitude and offset; a linear map
of each curve to a 2D vector gives its phase shift through atan2. The decoder must rebuild the
window from the sinusoids a sin(2 pi (f t + phase)) + offset alone, which forces the latent
curves to be periodic. Batch normalisation and AdamW as in the paper.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import numpy as np

from ...errors import PfnnError
from ..phase_manifold import (FORMAT_VERSION, KIND, SAMPLE_STEP, WINDOW, PhaseEncoder, PhaseManifold, padded, span,
                              window_seconds)
from .trainer import _progress, _torch


@dataclasses.dataclass
class PhaseConfig:
    # The paper's architecture (M = 5 channels for a biped, a hidden layer of a third of the
    # inputs, kernels as long as the window), AdamW at 1e-4 with weight decay 1e-4, batches of 32.
    channels: int = 5
    window: int = WINDOW              # samples per window
    step: int = SAMPLE_STEP           # frames between samples
    epochs: int = 30
    windows_per_epoch: int = 32768    # random windows of the whole set each epoch
    batch_size: int = 32
    learning_rate: float = 1e-4
    weight_decay: float = 1e-4
    seed: int = 2022
    device: str = "cpu"


VALIDATION_WINDOWS = 4096


def build_pae(torch, inputs: int, config: PhaseConfig):
    nn = torch.nn
    kernel, channels, hidden = config.window, config.channels, max(1, inputs // 3)
    seconds = window_seconds(kernel, config.step)

    class PeriodicAutoencoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv1d(inputs, hidden, kernel, padding=kernel // 2)
            self.norm1 = nn.BatchNorm1d(hidden)
            self.conv2 = nn.Conv1d(hidden, channels, kernel, padding=kernel // 2)
            # Per channel, a linear map of its whole curve to a 2D vector: the phase by atan2.
            self.phase = nn.Conv1d(channels, 2 * channels, kernel, groups=channels)
            self.phase_norm = nn.BatchNorm1d(2 * channels)
            self.deconv1 = nn.Conv1d(channels, hidden, kernel, padding=kernel // 2)
            self.norm2 = nn.BatchNorm1d(hidden)
            self.deconv2 = nn.Conv1d(hidden, inputs, kernel, padding=kernel // 2)
            self.register_buffer("time", torch.linspace(-seconds / 2, seconds / 2, kernel))
            self.register_buffer("frequencies", torch.fft.rfftfreq(kernel)[1:] * kernel / seconds)

        def encode(self, x):
            """x (B, inputs, window) normalised -> phase (cycles), frequency (Hz), amplitude,
            offset, each (B, M)."""
            latent = self.conv2(torch.tanh(self.norm1(self.conv1(x))))
            transform = torch.fft.rfft(latent, dim=2)
            power = transform.abs()[:, :, 1:] ** 2
            total = torch.clamp(power.sum(dim=2), min=1e-12)
            frequency = (power * self.frequencies).sum(dim=2) / total
            amplitude = 2 * torch.sqrt(total) / kernel
            offset = transform.real[:, :, 0] / kernel
            v = self.phase_norm(self.phase(latent)[:, :, 0]).view(-1, channels, 2)
            phase = torch.atan2(v[..., 1], v[..., 0]) / (2 * math.pi)
            return phase, frequency, amplitude, offset

        def forward(self, x):
            phase, frequency, amplitude, offset = self.encode(x)
            signal = (amplitude[..., None] * torch.sin(2 * math.pi * (frequency[..., None] * self.time
                                                                       + phase[..., None])) + offset[..., None])
            return self.deconv2(torch.tanh(self.norm2(self.deconv1(signal))))

    return PeriodicAutoencoder()


class WindowSet:
    """Every frame of every clip as the centre of a window, without crossing from clip to clip:
    the clips' padded features end to end, and where each frame's window starts."""

    def __init__(self, features: list[np.ndarray], mean: np.ndarray, std: np.ndarray, window: int, step: int):
        parts, starts, at = [], [], 0
        for f in features:
            parts.append((padded(f, window, step) - mean) / std)
            starts.append(at + np.arange(len(f)))
            at += len(f) + span(window, step) - 1
        self.values = np.concatenate(parts).astype(np.float32)
        self.starts = np.concatenate(starts)
        self.window, self.step = window, step

    def __len__(self) -> int:
        return len(self.starts)

    def batch(self, torch, values, starts):
        """(B, inputs, window) windows starting at `starts` (a tensor) of `values` (the tensor of
        self.values)."""
        index = starts[:, None] + self.step * torch.arange(self.window, device=starts.device)
        return values[index].permute(0, 2, 1)


def feature_normalisation(features: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and deviation of every feature over all frames; a feature that never moves (the
    hips across, relative to themselves) is left unscaled rather than divided by zero."""
    stacked = np.concatenate(features).astype(np.float64)
    std = stacked.std(axis=0)
    return stacked.mean(axis=0).astype(np.float32), np.where(std > 1e-3, std, 1.0).astype(np.float32)


def train_pae(features: list[np.ndarray], config: PhaseConfig, validation: list[np.ndarray] | None = None,
              progress: bool = True, log=print):
    """Train on the clips' features (each (T, inputs)); returns the model, the normalisation and a
    history of per-epoch losses."""
    torch = _torch()
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    mean, std = feature_normalisation(features)
    data = WindowSet(features, mean, std, config.window, config.step)
    if len(data) < config.batch_size:
        raise PfnnError(f"{len(data)} frames are fewer than one batch of {config.batch_size}")
    values = torch.as_tensor(data.values).to(config.device)
    check = None
    if validation:
        held = WindowSet(validation, mean, std, config.window, config.step)
        chosen = np.sort(rng.choice(len(held), min(len(held), VALIDATION_WINDOWS), replace=False))
        check = held.batch(torch, torch.as_tensor(held.values), torch.as_tensor(held.starts[chosen])).to(config.device)
    model = build_pae(torch, features[0].shape[1], config).to(config.device)
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    per_epoch = min(config.windows_per_epoch, len(data)) // config.batch_size
    bar = _progress(progress)
    history = []
    for epoch in range(config.epochs):
        model.train()
        chosen = torch.as_tensor(data.starts[rng.choice(len(data), per_epoch * config.batch_size, replace=False)])
        started, total = time.perf_counter(), 0.0
        with bar(total=per_epoch, desc=f"epoch {epoch + 1}/{config.epochs}") as meter:
            for b in range(per_epoch):
                x = data.batch(torch, values, chosen[b * config.batch_size:(b + 1) * config.batch_size].to(config.device))
                loss = torch.mean((model(x) - x) ** 2)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                total = total + loss.detach()
                meter.update(1)
                if b % 100 == 0:
                    meter.set_postfix(loss=f"{float(total) / (b + 1):.4f}")
        entry = {"epoch": epoch + 1, "train_loss": float(total) / per_epoch, "seconds": time.perf_counter() - started}
        if check is not None:
            model.eval()
            with torch.no_grad():
                entry["validation_loss"] = float(torch.mean((model(check) - check) ** 2))
        history.append(entry)
        left = (config.epochs - epoch - 1) * np.mean([h["seconds"] for h in history[-3:]])
        text = " ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in entry.items())
        log(f"{text}, about {left / 60:.0f} min left" if epoch + 1 < config.epochs else text)
    model.eval()
    return model, (mean, std), history


def _folded(conv, norm) -> tuple[np.ndarray, np.ndarray]:
    """A convolution followed by batch normalisation (its running statistics) as one convolution."""
    scale = (norm.weight / (norm.running_var + norm.eps).sqrt()).detach().cpu().numpy()
    weight = conv.weight.detach().cpu().numpy() * scale[:, None, None]
    bias = (conv.bias.detach().cpu().numpy() - norm.running_mean.detach().cpu().numpy()) * scale \
        + norm.bias.detach().cpu().numpy()
    return weight.astype(np.float32), bias.astype(np.float32)


def encoder_arrays(model, normalisation) -> dict[str, np.ndarray]:
    """The encoder half as PhaseEncoder's arrays (batch normalisation folded in)."""
    mean, std = normalisation
    conv1_weight, conv1_bias = _folded(model.conv1, model.norm1)
    phase_weight, phase_bias = _folded(model.phase, model.phase_norm)
    channels = model.conv2.weight.shape[0]
    return {"feature_mean": mean, "feature_std": std, "conv1_weight": conv1_weight, "conv1_bias": conv1_bias,
            "conv2_weight": model.conv2.weight.detach().cpu().numpy().astype(np.float32),
            "conv2_bias": model.conv2.bias.detach().cpu().numpy().astype(np.float32),
            "phase_weight": phase_weight.reshape(channels, 2, -1), "phase_bias": phase_bias.reshape(channels, 2)}


def manifold_of(model, normalisation, features: np.ndarray, step: int, device: str = "cpu") -> PhaseManifold:
    """One clip's phase manifold by the trained model (the same numbers as PhaseEncoder.encode
    on the exported file, faster)."""
    torch = _torch()
    mean, std = normalisation
    data = WindowSet([features], mean, std, model.time.shape[0], step)
    values = torch.as_tensor(data.values).to(device)
    parts = []
    with torch.no_grad():
        for start in range(0, len(data), 4096):
            starts = torch.as_tensor(data.starts[start:start + 4096]).to(device)
            phase, frequency, amplitude, offset = model.encode(data.batch(torch, values, starts))
            parts.append(PhaseManifold(np.mod(phase.cpu().numpy(), 1.0), frequency.cpu().numpy(),
                                       amplitude.cpu().numpy(), offset.cpu().numpy()))
    return PhaseManifold.concatenate(parts)


def export_phases(model, normalisation, path: Path, provenance: str, clips: dict[str, np.ndarray],
                  step: int, device: str = "cpu") -> Path:
    """Write the encoder, its provenance, and the phase manifold of every frame of `clips`
    (name -> features): the cache of the database's phases."""
    arrays = encoder_arrays(model, normalisation)
    names = list(clips)
    manifolds = [manifold_of(model, normalisation, clips[name], step, device) for name in names]
    cache = PhaseManifold.concatenate(manifolds) if manifolds else None
    extra = {}
    if cache is not None:
        extra = {"cache_names": np.array(names), "cache_frames": np.array([len(clips[n]) for n in names]),
                 **{f"cache_{field}": getattr(cache, field).astype(np.float32)
                    for field in ("phase", "frequency", "amplitude", "offset")}}
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        np.savez_compressed(out, kind=np.array(KIND), format_version=np.array(FORMAT_VERSION),
                            provenance=np.array(provenance), sample_step=np.array(step), **arrays, **extra)
    PhaseEncoder.load(path)   # written as it will be read
    return path

