"""Synthesis of longer training motion from short clips.

`loop_cycles`: the first whole gait cycle of a clip (right-foot strike to right-foot strike)
repeated end to end, each repetition moved and turned rigidly so that it starts where the
previous one ended: a short take becomes as long a stretch of steady locomotion as needed, with
a phase that runs on continuously.
"""

from __future__ import annotations

import numpy as np

from ..rotation import matrix_to_quat, quat_slerp, quat_to_matrix, yaw_matrix
from .database import Clip, FPS, facing_yaw


def cycle_bounds(clip: Clip) -> tuple[int, int] | None:
    """First and one-past-last frame of the first whole phase cycle, or None."""
    wraps = np.flatnonzero(np.diff(clip.phase) < -0.5) + 1          # phase falls from ~1 to ~0
    if len(wraps) < 2:
        return None
    return int(wraps[0]), int(wraps[1])


def loop_cycles(clip: Clip, seconds: float) -> Clip | None:
    """The clip's first whole cycle repeated for `seconds`; None without a whole cycle."""
    bounds = cycle_bounds(clip)
    if bounds is None:
        return None
    start, stop = bounds
    length = stop - start
    yaw = facing_yaw(clip.positions.astype(np.float64))
    # Rigid motion of one cycle: from the root frame at `start` to the root frame at `stop`.
    turn = float(yaw[stop] - yaw[start])
    shift = clip.positions[stop, 0] - clip.positions[start, 0]
    shift = np.array([shift[0], 0.0, shift[2]])
    shift_local = yaw_matrix(-yaw[start], np.float64) @ shift
    repeats = int(np.ceil(seconds * FPS / length))
    positions, rotations = [], []
    origin = clip.positions[start, 0] * np.array([1.0, 0.0, 1.0])
    offset, heading = np.zeros(3), 0.0
    segment_positions = clip.positions[start:stop].astype(np.float64) - origin
    segment_rotations = clip.rotations[start:stop].astype(np.float64)
    for _ in range(repeats):
        rotation = yaw_matrix(heading, np.float64)
        positions.append(segment_positions @ rotation.T + offset + origin)
        rotations.append(rotation @ segment_rotations)
        offset = offset + yaw_matrix(yaw[start] + heading, np.float64) @ shift_local
        heading += turn
    tile = lambda array: np.concatenate([array[start:stop]] * repeats)   # noqa: E731
    return Clip(clip.name + "_looped", np.concatenate(positions).astype(np.float32),
                np.concatenate(rotations).astype(np.float32), tile(clip.phase), tile(clip.gaits),
                tile(clip.contacts))


def bend(clip: Clip, turn_rate: float) -> Clip:
    """The clip turned progressively: its path curves at `turn_rate` radians per second (+ left).

    Each frame's pose is turned about its root by the accumulated angle and the root's steps are
    turned with it, so a straight walk becomes a circle of radius speed / turn_rate.
    """
    angles = turn_rate * np.arange(clip.frames) / FPS
    rotations_y = np.stack([yaw_matrix(a, np.float64) for a in angles])                 # (T, 3, 3)
    root = clip.positions[:, 0].astype(np.float64) * np.array([1.0, 0.0, 1.0])
    steps = np.diff(root, axis=0)
    turned_steps = np.einsum("tij,tj->ti", rotations_y[:-1], steps)
    new_root = np.concatenate([root[:1], root[:1] + np.cumsum(turned_steps, axis=0)])
    local = clip.positions.astype(np.float64) - root[:, None, :]
    positions = np.einsum("tij,tkj->tki", rotations_y, local) + new_root[:, None, :]
    rotations = rotations_y[:, None] @ clip.rotations.astype(np.float64)
    return Clip(f"{clip.name}_bend{turn_rate:+.1f}", positions.astype(np.float32), rotations.astype(np.float32),
                clip.phase.copy(), clip.gaits.copy(), clip.contacts.copy())


def time_warp(clip: Clip, rate: float) -> Clip:
    """The clip played `rate` times faster (rate < 1 slower): speeds and phase rate scale with it."""
    frames = np.arange(0, clip.frames - 1, rate)
    low = np.floor(frames).astype(int)
    high = np.minimum(low + 1, clip.frames - 1)
    mu = (frames - low)[:, None, None]
    positions = (1 - mu) * clip.positions[low] + mu * clip.positions[high]
    nearest = np.where(mu[:, 0, 0] < 0.5, low, high)
    # Rotations are slerped: repeating or skipping frames would teach the network to shake.
    rotations = quat_to_matrix(quat_slerp(matrix_to_quat(clip.rotations[low]), matrix_to_quat(clip.rotations[high]),
                                          np.broadcast_to(mu[:, :, 0], clip.rotations[low].shape[:2])))
    unwrapped = np.unwrap(clip.phase * 2 * np.pi) / (2 * np.pi)
    phase = np.mod((1 - mu[:, 0, 0]) * unwrapped[low] + mu[:, 0, 0] * unwrapped[high], 1.0)
    gaits = (1 - mu[:, 0]) * clip.gaits[low] + mu[:, 0] * clip.gaits[high]
    return Clip(f"{clip.name}_x{rate:.2f}", positions.astype(np.float32), rotations.astype(np.float32), phase,
                gaits.astype(np.float32), clip.contacts[nearest])


def variations(clip: Clip, rates=(0.85, 1.0, 1.2), turn_rates=(0.0, 0.5, -0.5, 1.2, -1.2)) -> list[Clip]:
    """Speed and turning variety from one (looped) clip."""
    return [bend(time_warp(clip, rate), turn) for rate in rates for turn in turn_rates]
