"""Training on the network's own feedback: rollouts through consecutive training windows.

Every window's previous-pose inputs are the captured pose, yet in play they are what the network
itself drew a frame before. A network that leans on its previous pose can settle into a pose it
feeds itself (a MANN's legs freezing while the trajectory carries it on, docs/controllers.md: It
glides), a state the captured windows never show. Here runs of consecutive windows of one clip are
played as the runtime plays them: the first window as captured, every later one with the pose the
network predicted, carried into the next root frame and smoothed as the crowd does
(sim/crowd.JOINT_SMOOTH). The trajectory inputs stay the captured ones, or (`trajectory`) their
near future is fed back too: in play the future the network predicted a frame before, bent toward
the stick by the predictor, is its next input, so a network that carries its pose along can carry
its future along with it. A DeepPhase controller's phase manifold at now and the future samples
is fed back always (`channels` > 0), moved on as the runtime moves it (sim/deepphase), since in
play it is the network's own prediction; the past samples stay captured. The loss of every frame
of the run against the captured outputs teaches the network to walk on from its own poses.
"""

from __future__ import annotations

import numpy as np

from ...sim.crowd import JOINT_SMOOTH, standing_to_moving
from ...sim.deepphase import TICK, UPDATE_BLEND, read_phase_output
from ...sim.features import FUTURE_SAMPLES, INPUT, INPUT_SIZE, OUTPUT, SAMPLE_STEP, SAMPLES, STAND
from ...sim.trajectory import BIAS_DIRECTION, BIAS_POSITION, bend_shares
from .manifold_windows import turn_phase_vectors


def sequence_starts(follows: np.ndarray, frames: int) -> np.ndarray:
    """Rows that start `frames` consecutive windows of one clip, each one (the first included)
    following its clip's window before it, so that every window's root frame change is known.
    follows (N,) bool: row r is the frame after row r - 1 in the same clip."""
    follows = np.asarray(follows, bool)
    if len(follows) < frames:
        return np.zeros(0, np.int64)
    run = np.lib.stride_tricks.sliding_window_view(follows, frames).all(axis=1)
    return np.flatnonzero(run)


def furthest_starts(per_frame: np.ndarray, starts: np.ndarray, frames: int, share: float = 0.1) -> np.ndarray:
    """Of `starts`, the `share` whose runs of `frames` windows sum the most of `per_frame` (N,)."""
    starts = np.asarray(starts, np.int64)
    if len(starts) == 0:
        return starts
    through = np.concatenate([[0.0], np.cumsum(np.asarray(per_frame, np.float64))])
    run_sum = through[starts + frames] - through[starts]
    keep = max(1, int(round(share * len(starts))))
    return np.sort(starts[np.argsort(-run_sum, kind="stable")[:keep]])


def turning_starts(Y: np.ndarray, starts: np.ndarray, frames: int, share: float = 0.1) -> np.ndarray:
    """Of `starts`, the `share` whose runs of `frames` windows turn the root furthest (the sum of
    the captured turns, either way): the reversals and sharp turns, where a network that walks on
    from its own poses turns late (docs/training.md, 'Runs through the turns')."""
    return furthest_starts(np.abs(Y[:, OUTPUT["root_turn"].start]), starts, frames, share)   # the column alone, not all of Y


def strafing_starts(Y: np.ndarray, starts: np.ndarray, frames: int, share: float = 0.1) -> np.ndarray:
    """Of `starts`, the `share` whose runs of `frames` windows move the root furthest off its
    facing: each frame's speed less its forward part (nothing walking ahead, the speed
    side-stepping, twice it walking backwards). There a MANN's pose freezes while the trajectory
    carries it on (docs/controllers.md, 'It glides')."""
    velocity = np.asarray(Y[:, OUTPUT["root_velocity"]], np.float64)     # (x sideways, z ahead) in the root's frame
    return furthest_starts(np.linalg.norm(velocity, axis=1) - velocity[:, 1], starts, frames, share)


def stand_now(X: np.ndarray) -> np.ndarray:
    """(N,) the stand gait of each window's current sample (1 standing)."""
    return X[:, INPUT["gaits"].start + SAMPLES * STAND + SAMPLES - FUTURE_SAMPLES]


def stopping_starts(X: np.ndarray, starts: np.ndarray, frames: int, share: float = 0.1) -> np.ndarray:
    """Of `starts`, the `share` whose runs of `frames` windows come to a stand most: the rise of
    the stand gait now, summed over the run (walks and jogs stopping). There a network on its own
    poses can drift on or keep stepping after the stick is released (docs/training.md, 'Runs
    into a stand')."""
    stand = np.asarray(stand_now(X), np.float64)
    # Every window of a run follows the one before it (sequence_starts): no rise across clips.
    rise = np.concatenate([[0.0], np.maximum(np.diff(stand), 0.0)])
    return furthest_starts(rise, starts, frames, share)


def frame_changes(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row r (meaningful where it follows row r - 1): the turn and the root step from the
    previous-pose frame of row r (the root a frame before) to its output frame, both read from
    row r - 1's captured root motion, and the rise from row r - 1's output frame to row r's
    previous-pose frame (their root heights differ; one rise for every joint, so the root's)."""
    turn, step, rise = np.zeros(len(X), np.float32), np.zeros((len(X), 3), np.float32), np.zeros(len(X), np.float32)
    turn[1:] = Y[:-1, OUTPUT["root_turn"]][:, 0]
    step[1:, [0, 2]] = Y[:-1, OUTPUT["root_velocity"]]
    rise[1:] = X[1:, INPUT["joint_positions"].start + 1] - Y[:-1, OUTPUT["joint_positions"].start + 1]
    return turn, step, rise


def to_output_frame(torch, positions, step, turn):
    """(B, J, 3) joint positions in a row's previous-pose frame -> in its output frame: the root
    moved by `step` (B, 3) and turned by `turn` (B,) (rotation.rotate_y's convention)."""
    moved = positions - step[:, None, :]
    c, s = torch.cos(turn)[:, None], torch.sin(turn)[:, None]
    x, y, z = moved[..., 0], moved[..., 1], moved[..., 2]
    return torch.stack([c * x + s * z, y, c * z - s * x], dim=-1)


POSE = ("joint_positions", "joint_velocities")
PATH = ("trajectory_x", "trajectory_z", "direction_x", "direction_z")
FUTURE = ("future_x", "future_z", "future_direction_x", "future_direction_z")
NOW = SAMPLES - FUTURE_SAMPLES      # the input sample of the current frame; the predicted ones follow


def kept_shares(bias: float, per_step: bool) -> np.ndarray:
    """(FUTURE_SAMPLES - 1,) the share of the fed-back prediction the predictor keeps at future
    samples 1-5 (what `trajectory.bend_shares` leaves): at each sample's frame, or (`per_step`)
    averaged over the frames of the step leading to it, since the predictor blends positions
    step by step."""
    kept = 1 - bend_shares(bias)[:(FUTURE_SAMPLES - 1) * SAMPLE_STEP]
    if per_step:
        return kept.reshape(FUTURE_SAMPLES - 1, SAMPLE_STEP).mean(axis=1).astype(np.float32)
    return kept[SAMPLE_STEP - 1::SAMPLE_STEP].astype(np.float32)


class Rollouts:
    """Runs of `frames` consecutive windows and the root frame changes they are carried by, on
    the training device."""

    def __init__(self, torch, X, Y, follows, normalisation, frames: int, device: str, trajectory: bool = False,
                 channels: int = 0, ease: float | None = None):
        x_mean, x_std, y_mean, y_std = normalisation
        t = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float32).to(device)   # noqa: E731
        self.frames, self.trajectory, self.channels = frames, trajectory, channels
        self.ease = ease     # a gated network's blend eased as in play (policy.ExpertPolicy); None: not
        self.starts = sequence_starts(follows, frames)
        self.turning = turning_starts(Y, self.starts, frames)
        self.strafing = strafing_starts(Y, self.starts, frames)
        self.stopping = stopping_starts(X, self.starts, frames)
        turn, step, rise = frame_changes(X, Y)
        self.turn, self.step = t(turn), t(step)
        self.rise = t(rise[:, None] * np.array([0.0, 1.0, 0.0], np.float32))
        self.in_scale = {name: (t(x_mean[INPUT[name]]), t(x_std[INPUT[name]])) for name in POSE}
        self.out_scale = {name: (t(y_mean[OUTPUT[name]]), t(y_std[OUTPUT[name]])) for name in POSE}
        self.path_scale = {name: (t(x_mean[INPUT[name]][NOW:]), t(x_std[INPUT[name]][NOW:])) for name in PATH}
        self.future_mean, self.future_std = (t(np.stack([values[OUTPUT[name]] for name in FUTURE]))
                                             for values in (y_mean, y_std))
        self.kept_position, self.kept_direction = t(kept_shares(BIAS_POSITION, True)), t(kept_shares(BIAS_DIRECTION, False))
        # The input columns fed back after a run's first window: they carry the network's own errors.
        path = [np.arange(INPUT[name].start + NOW + 1, INPUT[name].stop) for name in PATH] if trajectory else []
        # The input columns of the manifold at now and the future samples (sample-major).
        self.manifold_columns = slice(INPUT_SIZE + NOW * channels * 2, INPUT_SIZE + SAMPLES * channels * 2)
        manifold = [np.arange(self.manifold_columns.start, self.manifold_columns.stop)] if channels else []
        self.fed_back = torch.as_tensor(np.concatenate(
            [np.arange(INPUT["joint_positions"].start, INPUT["joint_velocities"].stop)] + path + manifold)).to(device)
        if channels:
            self.manifold_in = (t(x_mean[self.manifold_columns]), t(x_std[self.manifold_columns]))
            self.output_scale = (t(y_mean), t(y_std))
            # The crowd's stand amount at each window: 1 moving, 0 standing.
            self.moving = t(standing_to_moving(np.clip(stand_now(X), 0.0, 1.0)))

    def _read(self, values, name, layout, scale):
        mean, std = scale[name]
        return (values[:, layout[name]] * std + mean).reshape(len(values), -1, 3)

    def _write(self, inputs, values, name):
        mean, std = self.in_scale[name]
        inputs[:, INPUT[name]] = (values.reshape(len(values), -1) - mean) / std

    def fed_back_future(self, torch, prediction, captured):
        """The next window's trajectory inputs from the current sample on (B, 4, 6: x, z, direction
        x, z) as play makes them: the future the network predicted (in the next window's root frame
        already), bent toward the captured future as the predictor bends it toward the stick."""
        predicted = prediction[:, OUTPUT[FUTURE[0]].start:OUTPUT[FUTURE[-1]].stop]
        predicted = predicted.reshape(len(prediction), len(FUTURE), FUTURE_SAMPLES) * self.future_std + self.future_mean
        steps = torch.diff(predicted[:, :2], dim=-1)
        captured_steps = torch.diff(captured[:, :2], dim=-1)
        steps = captured_steps + self.kept_position * (steps - captured_steps)
        positions = captured[:, :2, :1] + torch.cumsum(steps, dim=-1)
        direction = predicted[:, 2:, 1:] / (torch.linalg.norm(predicted[:, 2:, 1:], dim=1, keepdim=True) + 1e-6)
        direction = captured[:, 2:, 1:] + self.kept_direction * (direction - captured[:, 2:, 1:])
        direction = direction / (torch.linalg.norm(direction, dim=1, keepdim=True) + 1e-6)
        return torch.cat([captured[..., :1], torch.cat([positions, direction], dim=1)], dim=-1)

    def fed_back_manifold(self, torch, prediction, vectors, moving):
        """The next window's manifold inputs at now and the future samples (B, 6, M, 2: a sin, a cos
        per channel) as `sim/deepphase.advance_manifold` makes them: the current ones `vectors`
        turned by the predicted frequency over a tick, blended halfway with the predicted phase
        vectors, at the predicted amplitude scaled by 0.1 + 0.9 `moving` (B,)."""
        mean, std = self.output_scale
        read = read_phase_output(prediction * std + mean, self.channels)
        predicted = read["vectors"]
        amplitude = torch.relu(read["amplitude"]) * (0.1 + 0.9 * moving)[:, None, None]
        frequency = torch.relu(read["frequency"])
        unit = lambda v: v / torch.clamp(torch.linalg.norm(v, dim=-1, keepdim=True), min=1e-6)   # noqa: E731
        rotated = turn_phase_vectors(torch, unit(vectors), 2 * np.pi * TICK * frequency)
        direction = torch.where(torch.linalg.norm(predicted, dim=-1, keepdim=True) > 1e-6, unit(predicted), rotated)
        blended = (1 - UPDATE_BLEND) * rotated + UPDATE_BLEND * direction
        blended = torch.where(torch.linalg.norm(blended, dim=-1, keepdim=True) > 1e-6, blended, rotated)
        return amplitude[..., None] * unit(blended)

    def loss(self, torch, model, Xn, Yn, Pt, starts, noise):
        """Mean squared error over a run of `frames` windows from each row of `starts` (B,), the
        pose inputs after the first (and with `trajectory` the near future) fed from the
        network's own predictions; `noise`: the training noise's scale per input, or None."""
        starts = torch.as_tensor(starts, device=Xn.device)
        positions, velocities = (self._read(Xn[starts], name, INPUT, self.in_scale) for name in POSE)
        future = None
        if self.channels:
            mean, std = self.manifold_in
            manifold = (Xn[starts, self.manifold_columns] * std + mean).reshape(len(starts), FUTURE_SAMPLES, self.channels, 2)
        total, blend = 0.0, None
        for j in range(self.frames):
            rows = starts + j
            inputs = Xn[rows].clone()
            self._write(inputs, positions, "joint_positions")
            self._write(inputs, velocities, "joint_velocities")
            if future is not None:
                for i, name in enumerate(PATH):
                    mean, std = self.path_scale[name]
                    columns = slice(INPUT[name].start + NOW, INPUT[name].stop)
                    inputs[:, columns] = (future[:, i] - mean) / std
            if self.channels and j > 0:
                mean, std = self.manifold_in
                inputs[:, self.manifold_columns] = (manifold.reshape(len(rows), -1) - mean) / std
            if noise is not None:
                jitter = noise * torch.randn_like(inputs)
                if j > 0:   # after the first window these inputs carry the network's own errors
                    jitter[:, self.fed_back] = 0.0
                inputs = inputs + jitter
            if self.ease is None:
                prediction = model(inputs, Pt[rows])
            else:   # the gradient flows through the carried blend, as the pose's through the fed-back pose
                gate = model.blend(inputs, Pt[rows])
                blend = gate if blend is None else blend + self.ease * (gate - blend)
                prediction = model.with_blend(inputs, blend)
            total = total + torch.mean((prediction - Yn[rows]) ** 2)
            if j + 1 < self.frames:
                predicted_positions, predicted_velocities = (self._read(prediction, name, OUTPUT, self.out_scale)
                                                             for name in POSE)
                carried = to_output_frame(torch, positions, self.step[rows], self.turn[rows]) + predicted_velocities
                drawn = carried + JOINT_SMOOTH * (predicted_positions - carried)
                positions, velocities = drawn + self.rise[rows + 1, None, :], predicted_velocities
                if self.trajectory:
                    captured = torch.stack([Xn[rows + 1, INPUT[name]][:, NOW:] * self.path_scale[name][1]
                                            + self.path_scale[name][0] for name in PATH], dim=1)
                    future = self.fed_back_future(torch, prediction, captured)
                if self.channels:
                    # Fed back as a given, not a path for the gradient: with the gradient through it, the
                    # runs taught the network to slow its own manifold (walk_circle in the plaza at 81
                    # units/s against 93 detached, 91 eval cases missing a bar against 85).
                    manifold = self.fed_back_manifold(torch, prediction, manifold, self.moving[rows]).detach()
        return total / self.frames


# A run's errors feed on themselves: a bad start can make one gradient far larger than the rest.
ROLLOUT_GRADIENT_NORM = 1.0
