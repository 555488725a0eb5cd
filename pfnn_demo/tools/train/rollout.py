"""Training on the network's own feedback: rollouts through consecutive training windows.

Every window's previous-pose inputs are the captured pose, yet in play they are what the network
itself drew a frame before. A network that leans on its previous pose can settle into a pose it
feeds itself (a MANN's legs freezing while the trajectory carries it on, docs/controllers.md: It
glides), a state the captured windows never show. Here runs of consecutive windows of one clip are
played as the runtime plays them: the first window as captured, every later one with the pose the
network predicted, carried into the next root frame and smoothed as the crowd does
(sim/crowd.JOINT_SMOOTH), while the trajectory inputs stay the captured ones. The loss of every
frame of the run against the captured outputs teaches the network to walk on from its own poses.
"""

from __future__ import annotations

import time

import numpy as np

from ...sim.crowd import JOINT_SMOOTH
from ...sim.features import INPUT, OUTPUT


def sequence_starts(follows: np.ndarray, frames: int) -> np.ndarray:
    """Rows that start `frames` consecutive windows of one clip, each one (the first included)
    following its clip's window before it, so that every window's root frame change is known.
    follows (N,) bool: row r is the frame after row r - 1 in the same clip."""
    follows = np.asarray(follows, bool)
    if len(follows) < frames:
        return np.zeros(0, np.int64)
    run = np.lib.stride_tricks.sliding_window_view(follows, frames).all(axis=1)
    return np.flatnonzero(run)


def frame_changes(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row r (meaningful where it follows row r - 1): the turn and the root step from the
    previous-pose frame of row r (the root a frame before) to its output frame, both read from
    row r - 1's captured root motion, and the vertical shift between row r - 1's output frame and
    row r's previous-pose frame (their heights differ; the same for every joint)."""
    turn, step, shift = (np.zeros(len(X), np.float32), np.zeros((len(X), 3), np.float32),
                         np.zeros((len(X), X[:, INPUT["joint_positions"]].shape[1]), np.float32))
    turn[1:] = Y[:-1, OUTPUT["root_turn"]][:, 0]
    step[1:, [0, 2]] = Y[:-1, OUTPUT["root_velocity"]]
    shift[1:] = X[1:, INPUT["joint_positions"]] - Y[:-1, OUTPUT["joint_positions"]]
    return turn, step, shift


def to_output_frame(torch, positions, step, turn):
    """(B, J, 3) joint positions in a row's previous-pose frame -> in its output frame: the root
    moved by `step` (B, 3) and turned by `turn` (B,) (rotation.rotate_y's convention)."""
    moved = positions - step[:, None, :]
    c, s = torch.cos(turn)[:, None], torch.sin(turn)[:, None]
    x, y, z = moved[..., 0], moved[..., 1], moved[..., 2]
    return torch.stack([c * x + s * z, y, c * z - s * x], dim=-1)


class Rollouts:
    """The tensors a rollout reads, on the training device."""

    def __init__(self, torch, X, Y, follows, normalisation, frames: int, device: str):
        x_mean, x_std, y_mean, y_std = normalisation
        t = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float32).to(device)   # noqa: E731
        self.frames = frames
        self.starts = sequence_starts(follows, frames)
        turn, step, shift = frame_changes(X, Y)
        self.turn, self.step, self.shift = t(turn), t(step), t(shift.reshape(len(X), -1, 3))
        self.positions, self.velocities = t(X[:, INPUT["joint_positions"]]), t(X[:, INPUT["joint_velocities"]])
        self.scale = {name: (t(x_mean[INPUT[name]]), t(x_std[INPUT[name]])) for name in ("joint_positions",
                                                                                      "joint_velocities")}
        self.out_scale = {name: (t(y_mean[OUTPUT[name]]), t(y_std[OUTPUT[name]])) for name in ("joint_positions",
                                                                                           "joint_velocities")}

    def output(self, prediction, name):
        mean, std = self.out_scale[name]
        return (prediction[:, OUTPUT[name]] * std + mean).reshape(len(prediction), -1, 3)

    def input(self, values, name):
        mean, std = self.scale[name]
        return (values.reshape(len(values), -1) - mean) / std

    def loss(self, torch, model, Xn, Yn, Pt, starts, noise):
        """Mean squared error over a run of `frames` windows from each row of `starts` (B,), the
        pose inputs after the first fed from the network's own predictions."""
        starts = torch.as_tensor(starts, device=Xn.device)
        positions = self.positions[starts].reshape(len(starts), -1, 3)
        velocities = self.velocities[starts].reshape(len(starts), -1, 3)
        pose = slice(INPUT["joint_positions"].start, INPUT["joint_velocities"].stop)
        total = 0.0
        for j in range(self.frames):
            rows = starts + j
            inputs = Xn[rows].clone()
            inputs[:, INPUT["joint_positions"]] = self.input(positions, "joint_positions")
            inputs[:, INPUT["joint_velocities"]] = self.input(velocities, "joint_velocities")
            jitter = noise * torch.randn_like(inputs)
            if j > 0:   # after the first window the pose carries the network's own errors
                jitter[:, pose] = 0.0
            prediction = model(inputs + jitter, Pt[rows])
            total = total + torch.mean((prediction - Yn[rows]) ** 2)
            if j + 1 < self.frames:
                predicted_velocities = self.output(prediction, "joint_velocities")
                carried = to_output_frame(torch, positions, self.step[rows], self.turn[rows]) + predicted_velocities
                drawn = carried + JOINT_SMOOTH * (self.output(prediction, "joint_positions") - carried)
                positions, velocities = drawn + self.shift[rows + 1], predicted_velocities
        return total / self.frames


def fine_tune(torch, model, optimiser, rollouts: Rollouts, tensors, noise, config, rng, bar, log, rate,
              windows):
    """`config.rollout_updates` updates on `config.rollout_sequences` rollouts each, the learning
    rate `rate(progress)`; tensors: the normalised inputs, outputs and the phases. Every update
    also takes the loss `windows()` of a batch of ordinary windows: trained on rollouts alone,
    the network turned slower (20 of 96 eval cases over the turning bar against 7). Returns the
    mean rollout loss."""
    if len(rollouts.starts) == 0:
        log(f"no clip has {rollouts.frames} consecutive windows: no rollout training")
        return None
    model.train()
    started, total = time.perf_counter(), 0.0
    with bar(total=config.rollout_updates, desc=f"rollouts of {rollouts.frames} frames") as meter:
        for update in range(config.rollout_updates):
            for group in optimiser.param_groups:
                group["lr"] = rate(update / config.rollout_updates)
            starts = rollouts.starts[rng.integers(0, len(rollouts.starts), config.rollout_sequences)]
            loss = rollouts.loss(torch, model, *tensors, starts, noise)
            optimiser.zero_grad()
            (loss + windows() + config.l1 * model.l1()).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), ROLLOUT_GRADIENT_NORM)
            optimiser.step()
            total = total + loss.detach()
            meter.update(1)
            if update % 50 == 0:
                meter.set_postfix(loss=f"{float(total) / (update + 1):.4f}")
    mean = float(total) / config.rollout_updates
    log(f"rollouts: {config.rollout_updates} updates of {config.rollout_sequences} runs of {rollouts.frames} frames, "
        f"loss {mean:.4f}, {time.perf_counter() - started:.0f} s")
    return mean


# A run's errors feed on themselves: a bad start can make one gradient far larger than the rest.
ROLLOUT_GRADIENT_NORM = 1.0
