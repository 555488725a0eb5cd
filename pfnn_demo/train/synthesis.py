"""Synthesis of longer training motion from short clips.

`loop_cycles`: the first whole gait cycle of a clip (right-foot strike to right-foot strike)
repeated end to end, each repetition moved and turned rigidly so that it starts where the
previous one ended: a short take becomes as long a stretch of steady locomotion as needed, with
a phase that runs on continuously.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from ..rotation import matrix_to_quat, quat_slerp, quat_to_matrix, yaw_matrix
from . import labels
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


# Root speeds (units per second) the runtime asks for: walking 150 (2.5 per frame), jogging 450.
WALK_SPEEDS = (100.0, 130.0, 160.0)
JOG_SPEEDS = (280.0, 360.0, 440.0)
TURN_RATES = (0.0, 0.5, -0.5, 1.0, -1.0, 1.8, -1.8)     # radians per second
MAX_WARP = (0.7, 1.7)          # beyond these a cadence stops looking human


def speed_of(clip: Clip) -> float:
    root = clip.positions[:, 0, [0, 2]].astype(np.float64)
    return float(np.linalg.norm(root[-1] - root[0]) / max(clip.frames - 1, 1) * FPS)


def warp_rates(clip: Clip) -> list[float]:
    """Time-warp rates that bring a locomotion clip to the speeds the runtime asks for."""
    speed = speed_of(clip)
    if speed < 40.0:
        return [1.0]
    targets = JOG_SPEEDS if clip.gaits[:, 2].mean() > 0.5 else WALK_SPEEDS
    return sorted({round(float(np.clip(t / speed, *MAX_WARP)), 2) for t in targets})


def variations(clip: Clip, turn_rates=TURN_RATES) -> list[Clip]:
    """Speed and turning variety from one (looped) clip."""
    return [bend(time_warp(clip, rate), turn) for rate in warp_rates(clip) for turn in turn_rates]


def retime(clip: Clip, source_frames: np.ndarray, extra_cycles: np.ndarray | None = None, name: str = "") -> Clip:
    """The clip sampled at fractional source frames (positions lerped, rotations slerped); the
    phase follows the source, plus `extra_cycles` where the pose holds while the phase runs on.
    Gait weights are labelled afresh from the new root speed."""
    frames = np.clip(source_frames, 0, clip.frames - 1)
    low = np.minimum(np.floor(frames).astype(int), clip.frames - 1)
    high = np.minimum(low + 1, clip.frames - 1)
    mu = (frames - low)[:, None, None]
    positions = (1 - mu) * clip.positions[low] + mu * clip.positions[high]
    rotations = quat_to_matrix(quat_slerp(matrix_to_quat(clip.rotations[low]), matrix_to_quat(clip.rotations[high]),
                                          np.broadcast_to(mu[:, :, 0], clip.rotations[low].shape[:2])))
    unwrapped = np.unwrap(clip.phase * 2 * np.pi) / (2 * np.pi)
    phase = (1 - mu[:, 0, 0]) * unwrapped[low] + mu[:, 0, 0] * unwrapped[high]
    if extra_cycles is not None:
        phase = phase + extra_cycles
    contacts = clip.contacts[np.where(mu[:, 0, 0] < 0.5, low, high)]
    gaits = labels.gait_weights(positions, contacts > 0.5, FPS)
    return Clip(name or clip.name + "_retimed", positions.astype(np.float32), rotations.astype(np.float32),
                np.mod(phase, 1.0), gaits.astype(np.float32), contacts, clip.source)


FOOT_DOWN = 3.0        # units above its own ground level: a heel or toe resting on the floor


def feet_down(clip: Clip) -> np.ndarray:
    """(T, 4) heel and toe joints resting at their ground level (whether moving or not)."""
    heights = clip.positions[:, list(labels.CONTACT_ORDER), 1]
    return heights < np.percentile(heights, 5, axis=0) + FOOT_DOWN


def double_support_frames(clip: Clip) -> np.ndarray:
    """The middle frame of each spell with both feet on the floor (a heel or a toe each)."""
    down = feet_down(clip)
    both = (down[:, 0] | down[:, 1]) & (down[:, 2] | down[:, 3])
    spells, count = ndimage.label(both)
    return np.array([int(np.flatnonzero(spells == k).mean()) for k in range(1, count + 1)], dtype=int)


def _ramp(seconds: float) -> np.ndarray:
    """Playback rate falling smoothly from 1 to 0 over `seconds`."""
    t = np.linspace(0.0, 1.0, max(int(round(seconds * FPS)), 2))
    return 1.0 - t * t * (3 - 2 * t)


def stop_and_go(clip: Clip, stop_frame: int, slow_down: float, hold_cycles: int, stand_rate: float,
                speed_up: float) -> Clip | None:
    """Locomotion slowing to a halt at `stop_frame` (both feet down), standing still while the
    phase runs on for `hold_cycles` cycles at `stand_rate` cycles per second, then setting off again.
    None when the clip is too short around `stop_frame`."""
    down, up = _ramp(slow_down), _ramp(speed_up)[::-1]
    approach = np.cumsum(down[::-1])[::-1]            # source frames still to go before the stop
    lead = int(2 * FPS)                               # full-speed walking before and after
    start = stop_frame - approach[0] - lead
    end = stop_frame + up.sum() + lead
    if start < 0 or end >= clip.frames - 1:
        return None
    hold = int(round(hold_cycles / stand_rate * FPS))
    before = start + np.arange(lead)
    slowing = stop_frame - approach
    holding = np.full(hold, float(stop_frame))
    resting = feet_down(clip)[stop_frame].astype(np.float32)
    speeding = stop_frame + np.cumsum(up) - up[0]
    after = speeding[-1] + 1 + np.arange(lead)
    source = np.concatenate([before, slowing, holding, speeding, after])
    extra = np.concatenate([np.zeros(len(before) + len(slowing)), np.linspace(0, hold_cycles, hold, endpoint=False),
                            np.full(len(speeding) + len(after), float(hold_cycles))])
    made = retime(clip, source, extra, f"{clip.name}_stop{stop_frame}")
    hold_frames = slice(len(before) + len(slowing), len(before) + len(slowing) + hold)
    made.contacts[hold_frames] = np.maximum(made.contacts[hold_frames], resting)
    return made


def stops(clip: Clip, rng: np.random.Generator, count: int) -> list[Clip]:
    """`count` stops and starts at random double-support moments of a walking clip."""
    candidates = double_support_frames(clip)
    out = []
    for frame in rng.permutation(candidates)[:count * 3]:
        made = stop_and_go(clip, int(frame), rng.uniform(0.4, 0.9), int(rng.integers(1, 3)),
                           rng.uniform(0.5, 0.9), rng.uniform(0.4, 0.8))
        if made is not None:
            out.append(made)
        if len(out) == count:
            break
    return out
