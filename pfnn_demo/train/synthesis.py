"""Synthesis of longer training motion from short clips.

`loop_cycles`: the first whole gait cycle of a clip (right-foot strike to right-foot strike)
repeated end to end, each repetition moved and turned rigidly so that it starts where the
previous one ended: a short take becomes as long a stretch of steady locomotion as needed, with
a phase that runs on continuously.
"""

from __future__ import annotations

import numpy as np

from .database import Clip, FPS, facing_yaw


def _yaw_matrix(yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


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
    shift_local = _yaw_matrix(-yaw[start]) @ shift
    repeats = int(np.ceil(seconds * FPS / length))
    positions, rotations = [], []
    origin = clip.positions[start, 0] * np.array([1.0, 0.0, 1.0])
    offset, heading = np.zeros(3), 0.0
    segment_positions = clip.positions[start:stop].astype(np.float64) - origin
    segment_rotations = clip.rotations[start:stop].astype(np.float64)
    for _ in range(repeats):
        rotation = _yaw_matrix(heading)
        positions.append(segment_positions @ rotation.T + offset + origin)
        rotations.append(rotation @ segment_rotations)
        offset = offset + _yaw_matrix(yaw[start] + heading) @ shift_local
        heading += turn
    tile = lambda array: np.concatenate([array[start:stop]] * repeats)   # noqa: E731
    return Clip(clip.name + "_looped", np.concatenate(positions).astype(np.float32),
                np.concatenate(rotations).astype(np.float32), tile(clip.phase), tile(clip.gaits),
                tile(clip.contacts))
