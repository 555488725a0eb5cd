"""Synthesis of longer training motion from short clips.

`loop_cycles`: the first whole gait cycle of a clip (right-foot strike to right-foot strike)
repeated end to end, each repetition moved and turned rigidly so that it starts where the
previous one ended: a short take becomes as long a stretch of steady locomotion as needed, with
a phase that runs on continuously.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import ndimage

from ...sim.skeleton import CONTACT_JOINTS
from ...sim.two_bone import place_knees
from ...sim.rotation import (matrix_to_quat, quat_slerp, quat_to_matrix, rotate_y, rotation_between, yaw_matrix,
                             yaw_of)
from . import labels
from .database import Clip, FPS, facing_yaw


def cycle_bounds(clip: Clip) -> tuple[int, int] | None:
    """First and one-past-last frame of the first whole phase cycle (from a foot strike to the
    same foot's next strike, either foot), or None."""
    unwrapped = np.unwrap(clip.phase * 2 * np.pi) / (2 * np.pi)
    halves = unwrapped * 2
    on_strike = np.abs(halves - np.round(halves)) < 1e-6
    moving = np.append(np.diff(unwrapped) > 1e-9, False)
    for start in np.flatnonzero(on_strike & moving):
        later = np.flatnonzero(unwrapped >= unwrapped[start] + 1.0 - 1e-6)
        if len(later):
            return int(start), int(later[0])
    return None


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
    segment_positions, segment_rotations = _seamless(clip, start, stop, origin, turn, shift)
    segment_positions -= origin
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


def _seamless(clip: Clip, start: int, stop: int, origin: np.ndarray, turn: float, shift: np.ndarray):
    """Positions and rotations of frames start..stop-1 with the pose's mismatch at the loop seam
    (frame `stop` against frame `start` turned by `turn` about `origin` and moved by `shift`)
    spread evenly over the cycle. Captured cycles never close exactly; left alone, a foot would
    jump at every seam."""
    positions = clip.positions[start:stop].astype(np.float64)
    rotations = clip.rotations[start:stop].astype(np.float64)
    carry = yaw_matrix(turn, np.float64)
    next_positions = (clip.positions[start].astype(np.float64) - origin) @ carry.T + origin + shift
    next_rotations = carry @ rotations[0]
    share = np.arange(stop - start, dtype=np.float64) / (stop - start)
    positions -= share[:, None, None] * (clip.positions[stop].astype(np.float64) - next_positions)
    # Rotations: turned back by a growing share of the seam's rotation (identity at the start).
    seam = matrix_to_quat(next_rotations @ np.swapaxes(clip.rotations[stop].astype(np.float64), -1, -2))
    ramp = quat_slerp(np.broadcast_to(matrix_to_quat(np.eye(3)), (len(share),) + seam.shape),
                      np.broadcast_to(seam, (len(share),) + seam.shape),
                      np.broadcast_to(share[:, None], (len(share), seam.shape[0])))
    return positions, quat_to_matrix(ramp) @ rotations


def smoothstep(t):
    """0 to 1 over t in [0, 1], with no speed at either end."""
    return t * t * (3 - 2 * t)


def bend(clip: Clip, turn_rate: float) -> Clip:
    """The clip turned progressively: its path curves at `turn_rate` radians per second (+ left).

    Each frame's pose is turned about its root by the accumulated angle and the root's steps are
    turned with it, so a straight walk becomes a circle of radius speed / turn_rate.
    """
    return turn_along(clip, turn_rate * np.arange(clip.frames) / FPS, f"{clip.name}_bend{turn_rate:+.1f}")


def turn_along(clip: Clip, angles: np.ndarray, name: str) -> Clip:
    """The clip with each frame's pose turned about its root by `angles` (radians, + left, one per
    frame) and the root's steps turned with it."""
    rotations_y = np.stack([yaw_matrix(a, np.float64) for a in angles])                 # (T, 3, 3)
    root = clip.positions[:, 0].astype(np.float64) * np.array([1.0, 0.0, 1.0])
    steps = np.diff(root, axis=0)
    turned_steps = np.einsum("tij,tj->ti", rotations_y[:-1], steps)
    new_root = np.concatenate([root[:1], root[:1] + np.cumsum(turned_steps, axis=0)])
    local = clip.positions.astype(np.float64) - root[:, None, :]
    positions = np.einsum("tij,tkj->tki", rotations_y, local) + new_root[:, None, :]
    rotations = rotations_y[:, None] @ clip.rotations.astype(np.float64)
    return Clip(name, positions.astype(np.float32), rotations.astype(np.float32), clip.phase.copy(),
                clip.gaits.copy(), clip.contacts.copy(), clip.source, clip.ground, clip.category, clip.one_shot)


def setting_off_frames(clip: Clip, still_seconds: float = 0.5) -> np.ndarray:
    """Frames where the root sets off after standing still for at least `still_seconds`."""
    root = clip.positions[:, 0, [0, 2]].astype(np.float64)
    speed = np.append(np.linalg.norm(np.diff(root, axis=0), axis=1) * FPS, 0.0)
    still = ndimage.uniform_filter1d(speed, 9, mode="nearest") < STAND_SPEED
    spells, count = ndimage.label(still)
    onsets = []
    for k in range(1, count + 1):
        frames = np.flatnonzero(spells == k)
        if len(frames) >= still_seconds * FPS and frames[-1] + 1 < clip.frames:
            onsets.append(int(frames[-1]) + 1)
    return np.array(onsets, dtype=int)


TURNING_START_ANGLES = np.radians([45.0, -45.0, 90.0, -90.0, 135.0, -135.0, 180.0])


def turning_start(clip: Clip, onset: int, angle: float, lead: float = 0.15) -> Clip:
    """Setting off from standing towards `angle` radians from the facing (+ left): from `lead`
    seconds before `onset` the body turns to the new direction while it takes its first steps,
    over 0.5 s for a small turn to 1.1 s to turn round, so the walk heads that way. Without such
    starts every start in the data went straight ahead, and a network pushed sideways from
    standing side-stepped away instead of turning to walk."""
    seconds = 0.5 + 0.6 * abs(angle) / np.pi
    begin = onset - int(lead * FPS)
    t = np.clip((np.arange(clip.frames) - begin) / (seconds * FPS), 0.0, 1.0)
    return turn_along(clip, angle * smoothstep(t), f"{clip.name}_start{np.degrees(angle):+.0f}@{onset}")


def _sample(clip: Clip, frames: np.ndarray):
    """Positions (lerped), rotations (slerped), phase, nearest contacts and lerped gait weights
    at fractional frames of the clip."""
    frames = np.clip(frames, 0, clip.frames - 1)
    low = np.minimum(np.floor(frames).astype(int), clip.frames - 1)
    high = np.minimum(low + 1, clip.frames - 1)
    mu = (frames - low)[:, None, None]
    positions = (1 - mu) * clip.positions[low] + mu * clip.positions[high]
    # Rotations are slerped: repeating or skipping frames would teach the network to shake.
    rotations = quat_to_matrix(quat_slerp(matrix_to_quat(clip.rotations[low]), matrix_to_quat(clip.rotations[high]),
                                          np.broadcast_to(mu[:, :, 0], clip.rotations[low].shape[:2])))
    unwrapped = np.unwrap(clip.phase * 2 * np.pi) / (2 * np.pi)
    phase = np.mod((1 - mu[:, 0, 0]) * unwrapped[low] + mu[:, 0, 0] * unwrapped[high], 1.0)
    contacts = clip.contacts[np.where(mu[:, 0, 0] < 0.5, low, high)]
    gaits = (1 - mu[:, 0]) * clip.gaits[low] + mu[:, 0] * clip.gaits[high]
    return positions, rotations, phase, contacts, gaits


def time_warp(clip: Clip, rate: float) -> Clip:
    """The clip played `rate` times faster (rate < 1 slower): speeds and phase rate scale with it."""
    positions, rotations, phase, contacts, gaits = _sample(clip, np.arange(0, clip.frames - 1, rate))
    return Clip(f"{clip.name}_x{rate:.2f}", positions.astype(np.float32), rotations.astype(np.float32), phase,
                gaits.astype(np.float32), contacts, clip.source, clip.ground, clip.category, clip.one_shot)


# Root speeds (units per second) the runtime asks for: walking 150 (2.5 per frame), jogging 450;
# a network holds its jog well below what it is asked (the original network jogs at about 180).
# Jogs up to 420 in the data made a network that jogged at about 300 and shook 1.4x as much as
# the original over the jump bars (every joint accelerates harder the faster the stride).
WALK_SPEEDS = (70.0, 100.0, 130.0, 160.0)
JOG_SPEEDS = (190.0, 240.0, 290.0, 340.0)
TURN_RATES = (0.0, 1.0, -1.0, 1.8, -1.8, 2.6, -2.6, 3.4, -3.4)     # radians per second
MAX_WARP = (0.7, 1.7)          # beyond these a cadence stops looking human
MIN_JOG_CADENCE = 0.9          # a slower jog takes shorter strides rather than a slow-motion cadence


def speed_of(clip: Clip) -> float:
    root = clip.positions[:, 0, [0, 2]].astype(np.float64)
    return float(np.linalg.norm(root[-1] - root[0]) / max(clip.frames - 1, 1) * FPS)


def speed_changes(clip: Clip) -> list[tuple[float, float]]:
    """(cadence rate, stride scale) pairs that bring a locomotion clip to the speeds the runtime
    asks for: walks by their cadence alone, jogs slower than their source by shorter strides."""
    speed = speed_of(clip)
    if speed < 40.0:
        return [(1.0, 1.0)]
    jog = clip.gaits[:, 2].mean() > 0.5
    changes = set()
    for target in JOG_SPEEDS if jog else WALK_SPEEDS:
        rate = float(np.clip(target / speed, MIN_JOG_CADENCE if jog else MAX_WARP[0], MAX_WARP[1]))
        stride = min(target / (speed * rate), 1.0)
        changes.add((round(rate, 2), round(stride, 2)))
    return sorted(changes)


def at_speed(clip: Clip, rate: float, stride: float) -> Clip:
    """The clip with its cadence scaled by `rate` and its strides by `stride` (feet kept planted)."""
    if stride < 1.0:
        clip = side_step(clip, 0.0, stride=stride, width=0.0)
    return time_warp(clip, rate)


def variations(clip: Clip, turn_rates=TURN_RATES) -> list[Clip]:
    """Speed and turning variety from one (looped) clip."""
    return [bend(at_speed(clip, rate, stride), turn) for rate, stride in speed_changes(clip) for turn in turn_rates]


def retime(clip: Clip, source_frames: np.ndarray, name: str = "") -> Clip:
    """The clip sampled at fractional source frames (positions lerped, rotations slerped, the
    phase following the source). Gait weights are labelled afresh from the new root speed."""
    positions, rotations, phase, contacts, _ = _sample(clip, source_frames)
    gaits = labels.gait_weights(positions, contacts > 0.5, FPS)
    return Clip(name or clip.name + "_retimed", positions.astype(np.float32), rotations.astype(np.float32),
                phase, gaits.astype(np.float32), contacts, clip.source)


FOOT_DOWN = 3.0        # units above its own ground level: a heel or toe resting on the floor


def feet_down(clip: Clip) -> np.ndarray:
    """(T, 4) heel and toe joints resting at their ground level (whether moving or not)."""
    heights = clip.positions[:, CONTACT_JOINTS, 1]
    return heights < np.percentile(heights, 5, axis=0) + FOOT_DOWN


def double_support_frames(clip: Clip) -> np.ndarray:
    """The middle frame of each spell with both feet on the floor (a heel or a toe each)."""
    down = feet_down(clip)
    both = labels.both_feet_down(down)
    spells, count = ndimage.label(both)
    return np.array([int(np.flatnonzero(spells == k).mean()) for k in range(1, count + 1)], dtype=int)


def _ramp(seconds: float) -> np.ndarray:
    """Playback rate falling smoothly from 1 to 0 over `seconds`."""
    t = np.linspace(0.0, 1.0, max(int(round(seconds * FPS)), 2))
    return 1.0 - smoothstep(t)


def stop_and_go(clip: Clip, stop_frame: int, slow_down: float, hold: float, speed_up: float,
                lead_seconds: float = 2.0) -> Clip | None:
    """Locomotion slowing to a halt at `stop_frame` (both feet down), standing still for `hold`
    seconds, then setting off again. None when the clip is too short around `stop_frame`.

    The phase holds while standing, as in the original data's labels: a standing pose then
    belongs to one phase. (Letting the phase run on through the stand made every phase stand for
    several different stances, and the network's feet slid between them.)"""
    down, up = _ramp(slow_down), _ramp(speed_up)[::-1]
    approach = np.cumsum(down[::-1])[::-1]            # source frames still to go before the stop
    lead = int(lead_seconds * FPS)                    # full-speed motion before and after
    start = max(stop_frame - approach[0] - lead, 0)
    lead = int(stop_frame - approach[0] - start)
    end = stop_frame + up.sum() + lead
    if lead < FPS or end >= clip.frames - 1:
        return None
    hold = int(round(hold * FPS))
    before = start + np.arange(lead)
    slowing = stop_frame - approach
    holding = np.full(hold, float(stop_frame))
    speeding = stop_frame + np.cumsum(up) - up[0]
    after = speeding[-1] + 1 + np.arange(lead)
    source = np.concatenate([before, slowing, holding, speeding, after])
    made = retime(clip, source, name=f"{clip.name}_stop{stop_frame}")
    hold_frames = slice(len(before) + len(slowing), len(before) + len(slowing) + hold)
    # Standing, both feet are planted, a raised heel or toe included: all four contacts are on,
    # so that the runtime's foot IK locks both feet (labelled by height alone, the network's
    # standing contacts hovered about the lock threshold and the feet crept).
    made.contacts[hold_frames] = 1.0
    made.gaits = labels.gait_weights(made.positions, made.contacts > 0.5, FPS).astype(np.float32)
    made.category = "stop-and-go"
    return made


def stops(clip: Clip, rng: np.random.Generator, count: int, after: float = 0.0,
          hold: tuple[float, float] = (1.5, 4.0)) -> list[Clip]:
    """`count` stops and starts at random double-support moments of a walking clip (at least
    `after` seconds into it, with everything before it kept as the approach), standing for a
    random time in `hold` (seconds)."""
    candidates = double_support_frames(clip)
    candidates = candidates[candidates >= after * FPS]
    out = []
    for frame in rng.permutation(candidates)[:count * 3]:
        made = stop_and_go(clip, int(frame), rng.uniform(0.4, 0.9), rng.uniform(*hold), rng.uniform(0.4, 0.8),
                           lead_seconds=max(after, 2.0))
        if made is not None:
            out.append(made)
        if len(out) == count:
            break
    return out


REVERSAL_ANGLES = np.radians([90.0, -90.0, 135.0, -135.0, 180.0])


def reversals(clip: Clip, rng: np.random.Generator, count: int, after: float = 0.0,
              pivot: bool = False) -> list[Clip]:
    """`count` changes of direction by 90 to 180 degrees from a walking clip: slowing to a pause
    of at most 0.3 s and setting off the new way, the body turning from 0.3 s before it sets off
    (turning_start). Without them the only motion in the data that went backwards or sideways
    from the facing was strafing, and a network that turned its body round quicker than its
    steps came round walked on backwards, facing where it was asked to go.

    With `pivot`, the body starts turning as the walk starts slowing instead, so the turn is
    fastest about where the walk is slowest: the original network reverses so, turning as it
    slows (docs/training.md, "Pivoting reversals": in trials the MANN trained with it still
    walked through a reversal at the speed it came in at). The same random draws either way."""
    out = []
    for stop in stops(clip, rng, count, after, hold=(0.0, 0.3)):
        onset = _pause_end(stop)
        lead = (onset - _slowing_start(stop, onset)) / FPS if pivot else 0.3
        out.append(turning_start(stop, onset, float(rng.choice(REVERSAL_ANGLES)), lead=lead))
    return out


def _slowing_start(clip: Clip, pause_end: int) -> int:
    """The last frame before `pause_end` at which a stop-and-go clip still walks at nine tenths of
    the speed it came in at (its first second's)."""
    root = clip.positions[:, 0, [0, 2]].astype(np.float64)
    speed = ndimage.uniform_filter1d(np.linalg.norm(np.diff(root, axis=0), axis=1) * FPS, 5, mode="nearest")
    walking = np.flatnonzero(speed[:pause_end] >= 0.9 * np.median(speed[:FPS]))
    return int(walking[-1]) if len(walking) else 0


def turns_on_the_move(clip: Clip, rng: np.random.Generator, count: int, margin: float = 1.5) -> list[Clip]:
    """`count` turns by 90 to 180 degrees taken without slowing down (+ left), each a piece of the
    moving clip, `margin` seconds before the turn to as long after it. The body and the path turn
    together along a smoothstep over 0.4 s plus 0.6 s per half turn, so a turn round peaks
    halfway (4.5 degrees a frame; its labelled facing, about 3.8). `reversals` slow to a pause
    first; the original network turns fastest halfway through a reversal taken mid-walk, where the
    project's networks have slowed (docs/training.md, "Turning on the move": in trials these turns
    did not change that)."""
    out = []
    lead = int(margin * FPS)
    for _ in range(count):
        angle = float(rng.choice(REVERSAL_ANGLES))
        frames = int(round((0.4 + 0.6 * abs(angle) / np.pi) * FPS))
        if clip.frames < 2 * lead + frames + 1:
            break
        begin = int(rng.integers(0, clip.frames - 2 * lead - frames))
        cut = slice(begin, begin + 2 * lead + frames)
        piece = dataclasses.replace(clip, positions=clip.positions[cut], rotations=clip.rotations[cut],
                                    phase=clip.phase[cut], gaits=clip.gaits[cut], contacts=clip.contacts[cut])
        t = np.clip((np.arange(piece.frames) - lead) / frames, 0.0, 1.0)
        out.append(turn_along(piece, angle * smoothstep(t), f"{clip.name}_turn{np.degrees(angle):+.0f}@{begin}"))
    return out


def _pause_end(clip: Clip) -> int:
    """The frame after a stop-and-go clip's slowest spell: where it sets off again."""
    root = clip.positions[:, 0, [0, 2]].astype(np.float64)
    speed = ndimage.uniform_filter1d(np.linalg.norm(np.diff(root, axis=0), axis=1) * FPS, 5, mode="nearest")
    slowest = int(np.argmin(speed))
    paused = speed < speed[slowest] + 2.0
    end = slowest
    while end + 1 < len(paused) and paused[end + 1]:
        end += 1
    return end + 1


UPPER_BODY = np.arange(11, 31)            # LowerBack and everything above it
LEGS = ((1, 2, 3, 4), (6, 7, 8, 9))       # hip-joint helper, hip, knee, ankle
CROUCH_GAIT = np.array([0, 0, 0, 1, 0, 0], np.float32)


def crouch(clip: Clip, depth: float, lean: float) -> Clip:
    """A crouched version of a walking clip: pelvis lowered by `depth` units, the upper body bent
    forward by `lean` radians about the hips, the feet where they were and the knees re-solved."""
    positions = clip.positions.astype(np.float64).copy()
    rotations = clip.rotations.astype(np.float64).copy()
    old = positions.copy()
    yaw = facing_yaw(old)
    left = np.stack([np.cos(yaw), np.zeros_like(yaw), -np.sin(yaw)], axis=1)
    K = np.zeros((clip.frames, 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -left[:, 2], left[:, 1], -left[:, 0]
    K -= np.swapaxes(K, 1, 2)
    bend = np.eye(3) + np.sin(lean) * K + (1 - np.cos(lean)) * (K @ K)          # about each frame's left axis
    down = np.array([0.0, depth, 0.0])
    hips = old[:, 0] - down
    positions[:, 0] = hips
    positions[:, UPPER_BODY] = np.einsum("tij,tkj->tki", bend, old[:, UPPER_BODY] - old[:, :1]) + hips[:, None]
    rotations[:, UPPER_BODY] = bend[:, None] @ rotations[:, UPPER_BODY]
    for helper, hip, _knee, _ankle in LEGS:
        positions[:, [helper, hip]] = old[:, [helper, hip]] - down
    _resolve_knees(old, positions, rotations)
    gaits = np.broadcast_to(CROUCH_GAIT, clip.gaits.shape).copy()
    return Clip(f"{clip.name}_crouch{depth:.0f}", positions.astype(np.float32), rotations.astype(np.float32),
                clip.phase.copy(), gaits, clip.contacts.copy(), clip.source)


FEET = ((4, 5), (9, 10))                  # heel (ankle) and toe joints, left then right
BODY_JOINTS = np.setdiff1d(np.arange(31), np.ravel(FEET))


def _lower_to_reach(old: np.ndarray, new: np.ndarray) -> None:
    """Lower everything but the feet of pose `new` (in place), smoothly over time, where a leg
    (of the lengths in `old`) could not reach from its hip to its ankle."""
    drop = np.zeros(len(new))
    for _helper, hip, knee, ankle in LEGS:
        reach = np.linalg.norm(old[0, knee] - old[0, hip]) + np.linalg.norm(old[0, ankle] - old[0, knee]) - 0.5
        apart = new[:, hip] - new[:, ankle]
        across = np.minimum(np.linalg.norm(apart[:, [0, 2]], axis=1), reach)
        drop = np.maximum(drop, apart[:, 1] - np.sqrt(reach ** 2 - across ** 2))
    # Held over +-0.25 s and smoothed over about as long: a narrower window (9 frames, sigma 3)
    # jerked the hips up and down, on rolling ground 2x as hard as riding the ground itself.
    drop = ndimage.gaussian_filter1d(ndimage.maximum_filter1d(np.maximum(drop, 0.0), 31), 8.0)
    new[:, BODY_JOINTS, 1] -= drop[:, None]


def _resolve_knees(old: np.ndarray, new: np.ndarray, rotations: np.ndarray) -> None:
    """Knees of `new` re-solved (two-joint IK, bending as in `new`) to join its hips and ankles
    with the leg lengths of `old`; thigh and shin rotations turned to match (all in place)."""
    for _helper, hip, knee, ankle in LEGS:
        thigh = float(np.linalg.norm(old[0, knee] - old[0, hip]))
        shin = float(np.linalg.norm(old[0, ankle] - old[0, knee]))
        new[:, knee] = place_knees(new[:, hip], new[:, knee], new[:, ankle], thigh, shin)[0]
        rotations[:, hip] = rotation_between(old[:, knee] - old[:, hip], new[:, knee] - new[:, hip]) @ rotations[:, hip]
        rotations[:, knee] = rotation_between(old[:, ankle] - old[:, knee], new[:, ankle] - new[:, knee]) @ rotations[:, knee]


def side_step(clip: Clip, angle: float, stride: float = 0.7, width: float = 8.0) -> Clip:
    """The walk turned into stepping `angle` radians away from the facing direction (+ to the
    left; pi/2 is a side-step, pi walking backwards), the body still facing ahead.

    Each foot's path relative to the body is turned by `angle` about its mean position (so a
    planted foot stays planted while the body moves the new way), shortened to `stride` and moved
    `width` units outwards so the feet do not cross; the knees are re-solved with the two-joint IK.
    """
    positions = clip.positions.astype(np.float64)
    rotations = clip.rotations.astype(np.float64).copy()
    yaw = facing_yaw(positions)
    root = positions[:, 0] * np.array([1.0, 0.0, 1.0])
    local = np.stack([yaw_matrix(-a, np.float64) for a in yaw])
    world = np.swapaxes(local, 1, 2)
    body = np.einsum("tij,tkj->tki", local, positions - root[:, None])            # root-relative, facing +z
    turn = yaw_matrix(angle, np.float64)
    steps = np.einsum("tij,tj->ti", local[:-1], np.diff(root, axis=0))
    steps = stride * steps @ turn.T
    new_root = np.concatenate([root[:1], root[:1] + np.cumsum(np.einsum("tij,tj->ti", world[:-1], steps), axis=0)])
    new_body = body.copy()
    for side, (heel, toe) in zip((1.0, -1.0), FEET):
        neutral = body[:, heel].mean(axis=0) * np.array([1.0, 0.0, 1.0])
        moved = neutral + stride * (body[:, heel] - neutral) @ turn.T + np.array([side * width, 0.0, 0.0])
        shift = (moved - body[:, heel]) * np.array([1.0, 0.0, 1.0])
        new_body[:, heel] += shift
        new_body[:, toe] += shift
    new = np.einsum("tij,tkj->tki", world, new_body) + new_root[:, None]
    old = positions
    # A wide step may be out of the leg's reach: lower the body as much as it needs.
    _lower_to_reach(old, new)
    _resolve_knees(old, new, rotations)
    return Clip(f"{clip.name}_side{np.degrees(angle):+.0f}", new.astype(np.float32), rotations.astype(np.float32),
                clip.phase.copy(), clip.gaits.copy(), clip.contacts.copy(), clip.source)


class CycleTable:
    """One gait cycle of a looped clip in the body's own frame, to be sampled at any phase."""

    def __init__(self, clip: Clip):
        bounds = cycle_bounds(clip)
        if bounds is None:
            raise ValueError(f"{clip.name} has no whole gait cycle")
        start, stop = bounds
        positions = clip.positions.astype(np.float64)
        yaw = np.unwrap(facing_yaw(positions))
        frames = np.arange(start, stop + 1)
        root = positions[:, 0] * np.array([1.0, 0.0, 1.0])
        local = np.stack([yaw_matrix(-a, np.float64) for a in yaw[frames]])
        self.body = np.einsum("tij,tkj->tki", local, positions[frames] - root[frames, None])
        self.rotations = matrix_to_quat(local[:, None] @ clip.rotations[frames].astype(np.float64))
        self.velocity = np.einsum("tij,tj->ti", local, root[frames + 1] - root[frames])
        self.turn = yaw[frames + 1] - yaw[frames]
        self.contacts = clip.contacts[frames]
        self.gaits = clip.gaits[frames].mean(axis=0)
        unwrapped = np.unwrap(clip.phase[frames] * 2 * np.pi) / (2 * np.pi)
        self.phase = unwrapped - unwrapped[0]            # 0 ... 1 over the cycle
        self.offset = float(clip.phase[start])
        self.step = np.diff(self.phase).mean()

    def index(self, phase: float) -> float:
        return float(np.interp(np.mod(phase - self.offset, 1.0), self.phase, np.arange(len(self.phase))))

    def sample(self, phase: float):
        index = self.index(phase)
        low = min(int(index), len(self.phase) - 2)
        mu = index - low
        lerp = lambda a: (1 - mu) * a[low] + mu * a[low + 1]      # noqa: E731
        rotations = quat_slerp(self.rotations[low], self.rotations[low + 1], np.full(self.rotations.shape[1], mu))
        contacts = self.contacts[low] if mu < 0.5 else self.contacts[low + 1]
        return lerp(self.body), rotations, lerp(self.velocity), lerp(self.turn), contacts


def transition(a: Clip, b: Clip, before: float, blend: float, after: float, name: str = "") -> Clip:
    """Gait `a` changing into gait `b`: their cycles sampled at the same phase and blended over
    `blend` seconds (a phase-aligned blend), the root moved by the blended steps."""
    first, second = CycleTable(a), CycleTable(b)
    lead, ramp, tail = int(before * FPS), max(int(blend * FPS), 2), int(after * FPS)
    t = np.linspace(0.0, 1.0, ramp)
    weights = np.concatenate([np.zeros(lead), smoothstep(t), np.ones(tail)])
    count = len(weights)
    positions = np.empty((count, 31, 3))
    rotations = np.empty((count, 31, 4))
    contacts = np.empty((count, 4), np.float32)
    phase, yaws = np.empty(count), np.empty(count)
    root, yaw, p = np.zeros(3), 0.0, first.offset
    for k, w in enumerate(weights):
        body_a, rot_a, vel_a, turn_a, con_a = first.sample(p)
        body_b, rot_b, vel_b, turn_b, con_b = second.sample(p)
        turning = yaw_matrix(yaw, np.float64)
        positions[k] = ((1 - w) * body_a + w * body_b) @ turning.T + root
        rotations[k] = quat_slerp(rot_a, rot_b, np.full(31, w))
        contacts[k] = con_a if w < 0.5 else con_b
        phase[k], yaws[k] = p, yaw
        root = root + turning @ ((1 - w) * vel_a + w * vel_b)
        yaw += (1 - w) * turn_a + w * turn_b
        step_a = np.interp(first.index(p), np.arange(len(first.phase) - 1), np.diff(first.phase))
        step_b = np.interp(second.index(p), np.arange(len(second.phase) - 1), np.diff(second.phase))
        p += (1 - w) * step_a + w * step_b
    turns = np.stack([yaw_matrix(y, np.float64) for y in yaws])
    world = turns[:, None] @ quat_to_matrix(rotations)
    gaits = ((1 - weights)[:, None] * first.gaits + weights[:, None] * second.gaits).astype(np.float32)
    return Clip(name or f"{a.name}_to_{b.name}", positions.astype(np.float32), world.astype(np.float32),
                np.mod(phase, 1.0), gaits, contacts, a.source)


def running_jump(run: Clip, jump: Clip, before: float = 2.0, after: float = 2.0, blend_in: float = 0.3,
                 blend_out: float = 0.5) -> Clip | None:
    """A jump taken at the pace of a looped gait: `run`'s steps carry the root throughout (so the
    flight keeps the run's speed), and the body's pose changes into `jump`'s (a one-shot clip
    holding one jump, in its own root frame) over `blend_in` seconds up to its take-off, holds it
    through the flight and changes back over `blend_out` seconds from its landing. The phase runs
    on from the run's into the jump's own labels and back. The captured jumps all set off from
    standing, and a network jogging into a jump area shook through a jump it had never seen at
    that pace. None if `jump` has no flight long enough."""
    flight = labels.longest_flight(jump.contacts > 0.5)
    if len(flight) < 0.15 * FPS:
        return None
    ramp_in, ramp_out = int(blend_in * FPS), int(blend_out * FPS)
    first, last = int(flight[0]) - ramp_in, int(flight[-1]) + ramp_out
    if first < 0:
        return None
    table = CycleTable(run)
    positions = jump.positions.astype(np.float64)
    yaw = np.unwrap(facing_yaw(positions))
    local = yaw_matrix(-yaw, np.float64)
    root = positions[:, 0] * np.array([1.0, 0.0, 1.0])
    body = np.einsum("tij,tkj->tki", local, positions - root[:, None])
    jump_rotations = matrix_to_quat(local[:, None] @ jump.rotations.astype(np.float64))
    jump_phase = np.unwrap(jump.phase * 2 * np.pi) / (2 * np.pi)
    lead, tail = int(before * FPS), int(after * FPS)
    # A take that ends soon after landing holds its last pose while the run takes over again.
    source = np.minimum(np.concatenate([np.full(lead, first), np.arange(first, last + 1), np.full(tail, last)]),
                        jump.frames - 1)
    weights = np.concatenate([np.zeros(lead), smoothstep(np.linspace(0, 1, ramp_in, endpoint=False)),
                              np.ones(len(flight)), smoothstep(np.linspace(1, 0, ramp_out + 1))[1:], np.zeros(tail)])
    count = len(weights)
    # The run's phase at the start is chosen so that it meets the jump's own phase when the
    # blend begins: the jump's poses keep the phases they were labelled with.
    p = float(jump_phase[first]) - lead * table.step
    out_positions, out_rotations = np.empty((count, 31, 3)), np.empty((count, 31, 4))
    contacts, phase, yaws = np.empty((count, 4), np.float32), np.empty(count), np.empty(count)
    gaits = np.empty((count, 6))
    here, heading = np.zeros(3), 0.0
    for k, (w, f) in enumerate(zip(weights, source)):
        body_run, rot_run, vel_run, turn_run, con_run = table.sample(p)
        turning = yaw_matrix(heading, np.float64)
        out_positions[k] = ((1 - w) * body_run + w * body[f]) @ turning.T + here
        out_rotations[k] = quat_slerp(rot_run, jump_rotations[f], np.full(31, w))
        contacts[k] = con_run if w < 0.5 else jump.contacts[f]
        gaits[k] = (1 - w) * table.gaits + w * jump.gaits[f]
        phase[k], yaws[k] = p, heading
        here = here + turning @ vel_run
        heading += (1 - w) * turn_run
        jump_step = jump_phase[min(f + 1, jump.frames - 1)] - jump_phase[f]
        p += (1 - w) * table.step + w * jump_step
    world = yaw_matrix(yaws, np.float64)[:, None] @ quat_to_matrix(out_rotations)
    return Clip(f"{run.name}_jump_{jump.name}", out_positions.astype(np.float32), world.astype(np.float32),
                np.mod(phase, 1.0), gaits.astype(np.float32), contacts, run.source)


class BarGround:
    """Flat ground with one straight bar across it: a raised-cosine ridge `height` units high and
    2 * `half_width` units wide at its foot, centred on `centre` (x, z) and running across `along`
    (a unit horizontal direction), as the bars of the jump course."""

    def __init__(self, centre: np.ndarray, along: np.ndarray, height: float, half_width: float):
        self.centre, self.along = np.asarray(centre, np.float64), np.asarray(along, np.float64)
        self.height, self.half_width = float(height), float(half_width)

    def profile(self, distance: np.ndarray) -> np.ndarray:
        """0 ... 1: the bar's height at `distance` units from its centre line, over its height."""
        inside = np.abs(distance) < self.half_width
        return np.where(inside, 0.5 * (1 + np.cos(np.pi * np.clip(distance / self.half_width, -1, 1))), 0.0)

    def __call__(self, x, z):
        x, z = np.asarray(x, np.float64), np.asarray(z, np.float64)
        distance = (x - self.centre[0]) * self.along[0] + (z - self.centre[1]) * self.along[1]
        return self.height * self.profile(distance)


BAR_CLEARANCE = 3.0     # units every heel and toe stays above a bar synthesised under a jump


def over_a_bar(clip: Clip, height: float, half_width: float) -> Clip | None:
    """The clip (holding one jump) on flat ground with a bar under its flight, placed where the
    feet clear it most and lowered to `height` or what they clear by BAR_CLEARANCE, so that no
    foot touches it. The jump course's bars are narrow ridges whose height passes under the
    trajectory in a few frames; on smooth ground alone a network lifted its body with them.
    None if the feet cannot clear a bar of half that height."""
    flight = labels.longest_flight(clip.contacts > 0.5)
    if not len(flight):
        return None
    root = clip.positions[:, 0, [0, 2]].astype(np.float64)
    along = root[flight[-1]] - root[flight[0]]
    if np.linalg.norm(along) < 1e-6:
        return None
    along /= np.linalg.norm(along)
    feet = clip.positions[:, CONTACT_JOINTS].astype(np.float64)
    best, best_height = None, 0.0
    for frame in flight:
        bar = BarGround(root[frame], along, 1.0, half_width)
        under = bar(feet[..., 0], feet[..., 2])
        over = under > 1e-3
        clear = float(np.min((feet[..., 1][over] - BAR_CLEARANCE) / under[over])) if over.any() else np.inf
        if clear > best_height:
            best, best_height = frame, clear
    if best is None or best_height < 0.5 * height:
        return None
    return Clip(clip.name + "_bar", clip.positions, clip.rotations, clip.phase, clip.gaits, clip.contacts,
                clip.source, BarGround(root[best], along, min(height, best_height), half_width), clip.category,
                clip.one_shot)


class RollingGround:
    """Smooth random terrain: a few crossing waves, heights in units, seeded."""

    def __init__(self, rng: np.random.Generator, amplitude: float, waves: int = 4):
        self.directions = rng.uniform(0, 2 * np.pi, waves)
        self.lengths = rng.uniform(150.0, 450.0, waves)
        self.phases = rng.uniform(0, 2 * np.pi, waves)
        self.amplitudes = amplitude * rng.dirichlet(np.ones(waves))

    def __call__(self, x, z):
        x, z = np.asarray(x, np.float64), np.asarray(z, np.float64)
        height = np.zeros(np.broadcast_shapes(x.shape, z.shape))
        for direction, length, phase, amplitude in zip(self.directions, self.lengths, self.phases, self.amplitudes):
            along = x * np.sin(direction) + z * np.cos(direction)
            height = height + amplitude * np.sin(2 * np.pi * along / length + phase)
        return height


class WallsBeside:
    """Flat ground with blocks standing beside a path, as a street's buildings and walls: along
    random stretches of the path, on its left, its right or both, ground `clearance` or more from
    the path rises to a block 20-120 units high. The path itself stays on the flat, so the clip's
    poses are unchanged; only the terrain inputs at the trajectory's sides see the blocks.

    In play a character walks along walls and into corners, its side samples seeing the tops of
    blocks tens of units above its feet. Trained on rolling ground alone, the network took such
    heights for a slope: in the urban scene its raw pose shook in bursts, 4-5x the original's,
    wherever the heights under its trajectory spanned 40-100 units."""

    def __init__(self, path: np.ndarray, rng: np.random.Generator):
        from scipy.spatial import cKDTree

        self.path = np.asarray(path, np.float64)[:, [0, 2]]
        self.tree = cKDTree(self.path)
        step = np.linalg.norm(np.diff(self.path, axis=0), axis=1)
        self.along = np.concatenate([[0.0], np.cumsum(step)])
        tangent = np.gradient(self.path, axis=0)
        self.tangent = tangent / np.maximum(np.linalg.norm(tangent, axis=1, keepdims=True), 1e-9)
        length = self.along[-1]
        count = max(1, int(round(length / 200.0)))
        starts = rng.uniform(-50.0, max(length, 1.0), count)
        self.stretches = [(start, start + rng.uniform(60.0, 300.0), rng.choice([-1, 1, 0]),
                           rng.uniform(6.0, 22.0), rng.uniform(20.0, 120.0)) for start in starts]

    def __call__(self, x, z):
        x, z = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(z, np.float64))
        points = np.stack([x.ravel(), z.ravel()], axis=1)
        distance, nearest = self.tree.query(points)
        offset = points - self.path[nearest]
        side = np.sign(self.tangent[nearest, 0] * offset[:, 1] - self.tangent[nearest, 1] * offset[:, 0])
        along = self.along[nearest]
        height = np.zeros(len(points))
        for start, stop, which, clearance, top in self.stretches:
            inside = (along >= start) & (along <= stop) & (distance >= clearance) & ((which == 0) | (side == which))
            height = np.where(inside, np.maximum(height, top), height)
        return height.reshape(x.shape)


def on_terrain(clip: Clip, ground) -> Clip:
    """The clip walked over `ground(x, z)`: each foot raised by the higher ground under its heel
    and toe (constant while planted) and, where its toe's ground is the lower, pitched down onto
    it (`_pitch_feet`); the body raised by the mean of the feet's lifts, lowered further where a
    leg would not reach, and the knees re-solved with the two-joint IK. Use with
    clip_windows(clip, ground)."""
    old = clip.positions.astype(np.float64)
    new = old.copy()
    rotations = clip.rotations.astype(np.float64).copy()
    lifts, drops = [], []
    for heel, toe in FEET:
        heel_ground, toe_ground = (ndimage.gaussian_filter1d(ground(old[:, joint, 0], old[:, joint, 2]), 2.0,
                                                             mode="nearest") for joint in (heel, toe))
        # The higher of the two: a toe uphill of its heel is not in the ground (its heel is
        # left above a rising slope, as on the ball of the foot; lowering the ankle onto it
        # instead sank the hips 2 units more where the leg could not reach).
        lift = np.maximum(heel_ground, toe_ground)
        new[:, [heel, toe], 1] += lift[:, None]
        lifts.append(lift)
        drops.append(toe_ground - lift)
    body = ndimage.gaussian_filter1d(0.5 * (lifts[0] + lifts[1]), 6.0, mode="nearest")
    new[:, BODY_JOINTS, 1] += body[:, None]
    _pitch_feet(old, new, rotations, drops)
    _lower_to_reach(old, new)
    _resolve_knees(old, new, rotations)
    return Clip(clip.name + "_terrain", new.astype(np.float32), rotations.astype(np.float32), clip.phase.copy(),
                clip.gaits.copy(), clip.contacts.copy(), clip.source)


# The steepest a foot is pitched (sine of the angle): beyond it a toe is left above its ground.
MAX_FOOT_PITCH = 0.8


def _pitch_feet(old: np.ndarray, new: np.ndarray, rotations: np.ndarray, rises: list) -> None:
    """Each foot of `new` turned about its ankle, in the vertical plane along it, so that its toe
    rises by `rises[foot]` (T,) relative to its ankle: a toe downhill of its heel stands on the
    ground under it instead of floating above the falling slope (with the whole foot raised
    level, planted toes stood 1.4 units higher on 30-unit hills than on the flat, on average).
    The foot keeps its length; the ankle's and toe's rotations turn with it (all in place)."""
    for (heel, toe), rise in zip(FEET, rises):
        foot = old[:, toe] - old[:, heel]
        length = np.linalg.norm(foot, axis=1)
        height = np.clip(foot[:, 1] + rise, -MAX_FOOT_PITCH * length, MAX_FOOT_PITCH * length)
        along = foot[:, [0, 2]] / np.maximum(np.linalg.norm(foot[:, [0, 2]], axis=1), 1e-9)[:, None]
        horizontal = np.sqrt(length ** 2 - height ** 2)[:, None] * along
        pitched = np.stack([horizontal[:, 0], height, horizontal[:, 1]], axis=1)
        new[:, toe] = new[:, heel] + pitched
        turn = rotation_between(foot, pitched)
        rotations[:, heel] = turn @ rotations[:, heel]
        rotations[:, toe] = turn @ rotations[:, toe]


STANDING_END = 0.3       # seconds of standing at a clip's end for it to count as standing
STAND_SPEED = 20.0       # units/s of the root


def hold_standing(clip: Clip, seconds: float) -> Clip:
    """A clip that starts or ends standing, with that standing carried on for `seconds` more at
    each such end by playing its own standing frames back and forth (the body keeps its small
    captured sway and breathing instead of freezing); the feet stay planted, the phase holds."""
    root = clip.positions[:, 0, [0, 2]].astype(np.float64)
    speed = np.append(np.linalg.norm(np.diff(root, axis=0), axis=1) * FPS, 0.0)
    still = ndimage.uniform_filter1d(speed, 9, mode="nearest") < STAND_SPEED
    extra = int(seconds * FPS)

    def standing_frames(flags: np.ndarray) -> int:
        moving = np.flatnonzero(~flags)
        return int(moving[0]) if len(moving) else len(flags)

    before = after = np.zeros(0, int)
    head, tail = standing_frames(still), standing_frames(still[::-1])
    if head >= STANDING_END * FPS:
        span = np.arange(head)
        before = np.resize(np.concatenate([span, span[::-1]]), extra)[::-1]     # ends on frame 0
    if tail >= STANDING_END * FPS:
        span = np.arange(clip.frames - tail, clip.frames)
        after = np.resize(np.concatenate([span[::-1], span]), extra)            # starts by the last frame
    if not len(before) and not len(after):
        return clip
    order = np.concatenate([before, np.arange(clip.frames), after])
    contacts = clip.contacts[order].copy()
    phase = clip.phase[order].copy()
    contacts[:len(before)] = contacts[len(before) + clip.frames:] = 1.0
    phase[:len(before)], phase[len(before) + clip.frames:] = clip.phase[0], clip.phase[-1]
    gaits = clip.gaits[order].copy()
    return Clip(clip.name + "_held", clip.positions[order], clip.rotations[order], phase, gaits, contacts,
                clip.source, clip.ground, clip.category, clip.one_shot)


ONE_SHOT_RATES = (0.8, 0.9, 1.0, 1.12, 1.25)
ONE_SHOT_TURNS = (0.0, 0.4, -0.4, 0.8, -0.8)     # radians per second


def one_shot_variations(clip: Clip) -> list[Clip]:
    """A one-shot clip (a start, a stop, a jump ...) played a little slower and faster and curving
    gently either way: the same motion, never looped or cut. A clip on its own ground (stairs)
    is only retimed, since curving it would walk it off its steps."""
    turns = (0.0,) if clip.ground is not None else ONE_SHOT_TURNS
    retimed = [time_warp(clip, rate) if rate != 1.0 else clip for rate in ONE_SHOT_RATES]
    return [bend(version, turn) if turn else version for version in retimed for turn in turns]



def _foot_holds(heel: np.ndarray, toe: np.ndarray, heel_down: np.ndarray, toe_down: np.ndarray):
    """Per frame, the turn (radians about +Y) and horizontal shift (T, 3) that hold a foot still
    through each spell with its heel or toe down: the foot keeps the heading it has mid-spell,
    and the heel (or, with the heel up, the toe) stays where it is mid-spell. Between spells both
    blend linearly. None if the foot is never down."""
    down = heel_down | toe_down
    spells, count = ndimage.label(down)
    if count == 0:
        return None
    along = (toe - heel) * np.array([1.0, 0.0, 1.0])
    heading = np.unwrap(yaw_of(along))
    turn = np.full(len(heel), np.nan)
    shift = np.full((len(heel), 3), np.nan)
    for k in range(1, count + 1):
        frames = np.flatnonzero(spells == k)
        middle = frames[len(frames) // 2]
        turn[frames] = heading[middle] - heading[frames]
        toe_held = toe[middle] - heel[frames] - rotate_y(along[frames], turn[frames])
        shift[frames] = np.where(heel_down[frames, None], heel[middle] - heel[frames], toe_held)
    shift[:, 1] = 0.0
    known = np.flatnonzero(down)
    every = np.arange(len(heel))
    turn = np.interp(every, known, turn[known])
    shift = np.stack([np.interp(every, known, shift[known, axis]) for axis in range(3)], axis=1)
    return turn, shift


def plant_feet(clip: Clip) -> Clip:
    """The clip with each foot held still (horizontally, as a rigid foot) while its heel or toe
    is labelled in contact, the correction spread smoothly over the swing between contacts and
    the knees re-solved. Looping, bending and blending make planted feet drift (a turn of
    1.8 rad/s slides them about 25 units/s), and a network learns that drift as foot skate."""
    old = clip.positions.astype(np.float64)
    new = old.copy()
    rotations = clip.rotations.astype(np.float64).copy()
    for side, (heel, toe) in enumerate(FEET):
        holds = _foot_holds(old[:, heel], old[:, toe], clip.contacts[:, 2 * side] > 0.5,
                            clip.contacts[:, 2 * side + 1] > 0.5)
        if holds is None:
            continue
        turn, shift = holds
        new[:, heel] += shift
        new[:, toe] = new[:, heel] + rotate_y(old[:, toe] - old[:, heel], turn)     # a rigid foot
        rotation = rotation_between(old[:, toe] - old[:, heel], new[:, toe] - new[:, heel])
        rotations[:, [heel, toe]] = rotation[:, None] @ rotations[:, [heel, toe]]
    _lower_to_reach(old, new)
    _resolve_knees(old, new, rotations)
    return Clip(clip.name, new.astype(np.float32), rotations.astype(np.float32), clip.phase.copy(),
                clip.gaits.copy(), clip.contacts.copy(), clip.source, clip.ground, clip.category, clip.one_shot)


GROUNDING_LIMIT = 8.0    # units: the most a planted spell is moved onto its ground


def ground_feet(clip: Clip) -> Clip:
    """The clip with every planted spell of each foot stood on its ground: moved vertically by
    its median height above the foot's rest (the toe at labels.TOE_REST, the heel at that
    foot's own median height above its toe while both are down), at most GROUNDING_LIMIT, the
    moves spread linearly over the swings between spells and the knees re-solved. Some captures
    hold a planted foot pitched or floating (02_03's left toe 8.7 units up, 07_12's feet 6-7),
    and a network learns floating toes from them."""
    old = clip.positions.astype(np.float64)
    new = old.copy()
    rotations = clip.rotations.astype(np.float64).copy()
    every = np.arange(clip.frames)
    for side, (heel, toe) in enumerate(FEET):
        heel_down, toe_down = clip.contacts[:, 2 * side] > 0.5, clip.contacts[:, 2 * side + 1] > 0.5
        spells, count = ndimage.label(heel_down | toe_down)
        if count == 0:
            continue
        heel_above, toe_above = (old[:, joint, 1] - clip.ground_at(old[:, joint, 0], old[:, joint, 2])
                                 for joint in (heel, toe))
        both = heel_down & toe_down
        heel_rest = labels.TOE_REST + (float(np.median(heel_above[both] - toe_above[both])) if both.any() else 0.0)
        # Per frame, how far the planted joint stands above its rest (NaN where it is not down).
        excess = np.where(toe_down, toe_above - labels.TOE_REST, np.where(heel_down, heel_above - heel_rest, np.nan))
        middles = np.array(ndimage.labeled_comprehension(excess, spells, np.arange(1, count + 1), np.nanmedian,
                                                         float, np.nan))
        shift = -np.clip(middles, -GROUNDING_LIMIT, GROUNDING_LIMIT)[spells - 1]
        down = spells > 0
        move = np.interp(every, np.flatnonzero(down), shift[down])
        new[:, [heel, toe], 1] += move[:, None]
    _lower_to_reach(old, new)
    _resolve_knees(old, new, rotations)
    # Every label kept, the manifest's validation mark included: grounding comes before the split.
    return dataclasses.replace(clip, positions=new.astype(np.float32), rotations=rotations.astype(np.float32))

