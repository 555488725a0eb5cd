"""Automatic labels of a motion clip: foot contacts, gait phase, gait weights.

Positions are world joint positions (T, 31, 3) in the demo's units at `fps` frames per second.
  contacts  a heel or toe joint is in contact when it is slow and near the clip's ground
            (its own low percentile), cleaned of flicker;
  phase     0 at every right-foot strike, 0.5 at every left-foot strike, linear in between
            (in cycles, [0, 1)); a missed alternation spans a whole cycle; before the first and
            after the last strike the phase holds;
  gaits     stand, walk, jog, crouch, jump, bump from root speed, head height and feet in the air.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from ...sim.skeleton import CANONICAL

CONTACT_ORDER = tuple(CANONICAL.contact_joints)   # left heel, left toe, right heel, right toe (as the network)
HEAD, HIPS = CANONICAL.head, CANONICAL.hips
CONTACT_SPEED = 15.0                 # units per second: the threshold of a clean, slow foot...
MAX_CONTACT_SPEED = 80.0             # ...raised up to this for feet that never slow down so much
SMOOTH_SECONDS = 0.02
AIRBORNE = 0.35                      # seconds: longer than a running stride's flight
CONTACT_LIFT = {4: 6.0, 9: 6.0, 5: 5.0, 10: 5.0}   # above the joint's ground level
CLEAN_SECONDS = 0.05
SHUFFLE = 0.4                        # seconds: a foot landing again this soon is shuffling


def foot_contacts(positions: np.ndarray, fps: float, ground=None, by_height: bool = True) -> np.ndarray:
    """(T, 4) booleans in the order left heel, left toe, right heel, right toe.

    On uneven ground, `ground(x, z)` gives the floor under each joint (`footstep_ground`); a
    joint's height is then measured from it, not from the clip's lowest level. Without
    `by_height` a slow joint is in contact at any height (a first guess on unknown ground)."""
    joints = positions[:, CONTACT_ORDER].astype(np.float64)
    # Marker jitter is amplified by differentiation: smooth over about 20 ms first.
    smooth = ndimage.gaussian_filter1d(joints, SMOOTH_SECONDS * fps, axis=0, mode="nearest")
    speed = np.linalg.norm(np.gradient(smooth, axis=0) * fps, axis=-1)
    # Running feet never stop quite still: a joint's own slow frames set its threshold.
    threshold = np.clip(1.5 * np.percentile(speed, 10, axis=0), CONTACT_SPEED, MAX_CONTACT_SPEED)
    slow = speed < threshold
    if ground is None:
        heights = joints[..., 1]
        level = np.percentile(heights, 5, axis=0)
    else:
        # Above a recovered ground a swing can dip below the fit between steps: the level is
        # where the slow frames of each joint rest.
        heights = joints[..., 1] - ground(joints[..., 0], joints[..., 2])
        level = np.array([np.median(heights[slow[:, k], k]) if slow[:, k].any() else 0.0 for k in range(4)])
    lift = np.array([CONTACT_LIFT[j] for j in CONTACT_ORDER])
    contact = slow & ((heights < level + lift) | (not by_height))
    size = max(int(round(CLEAN_SECONDS * fps)) | 1, 3)
    return ndimage.median_filter(contact.astype(np.uint8), size=(size, 1), mode="nearest").astype(bool)


MIN_CONTACT = 0.08      # seconds a foot must stay down for its landing to count as a strike
TOE_FLICKER = 0.1       # seconds: a shorter lift of the toe between contacts is the same stance


def foot_strikes(contacts: np.ndarray, fps: float) -> list[tuple[int, float]]:
    """(frame, phase) of every strike, right 0.0, left 0.5: the moment the toe comes down (the
    foot is flat), for a contact that lasts at least MIN_CONTACT."""
    events = []
    shortest = max(int(round(MIN_CONTACT * fps)), 1)
    # A toe that flickers up for a few frames mid-stance has not stepped: close such gaps first
    # (a swing takes far longer), or a single step would count as a whole cycle.
    flicker = np.ones(max(int(round(TOE_FLICKER * fps)), 1), bool)
    for value, column in ((0.5, 1), (0.0, 3)):
        down = ndimage.binary_closing(np.pad(contacts[:, column], len(flicker)), flicker)[len(flicker):-len(flicker)]
        labels, count = ndimage.label(down)
        for index in range(1, count + 1):
            frames = np.flatnonzero(labels == index)
            if len(frames) >= shortest and frames[0] > 0:
                events.append((int(frames[0]), value))
    return sorted(events)


def phase_from_strikes(strikes: list[tuple[int, float]], frames: int, fps: float) -> np.ndarray:
    """Phase in cycles [0, 1) for every frame, from strike events.

    Between strikes the phase runs linearly (a slow step is a slow phase); a foot striking again
    before the other one did spans a whole cycle. Before the first and after the last strike the
    character stands: the phase holds (the hand labels of the original data do the same).
    """
    strikes = _clean_strikes(strikes, fps)
    if not strikes:
        return np.zeros(frames)
    times = [strikes[0][0]]
    values = [strikes[0][1]]
    for frame, value in strikes[1:]:
        step = (value - values[-1]) % 1.0
        times.append(frame)
        values.append(values[-1] + (step if step > 0 else 1.0))
    phase = np.interp(np.arange(frames, dtype=float), times, values)   # holds beyond the ends
    return np.mod(phase, 1.0)


def _clean_strikes(strikes: list[tuple[int, float]], fps: float) -> list[tuple[int, float]]:
    """Drop a foot's re-strike within SHUFFLE seconds of its previous one (a shuffle, not a step)."""
    cleaned: list[tuple[int, float]] = []
    last = {0.0: -10**9, 0.5: -10**9}
    for frame, value in strikes:
        if frame - last[value] >= SHUFFLE * fps:
            cleaned.append((frame, value))
            last[value] = frame
    return cleaned


def gait_weights(positions: np.ndarray, contacts: np.ndarray, fps: float, standing_head: float | None = None) -> np.ndarray:
    """(T, 6) weights: stand, walk, jog, crouch, jump, bump (bump always 0 here).

    Root speed below 25 units/s is standing, up to 220 walking, faster jogging (blended over a
    band); a head lower than 85 % of the standing head height crouches; no foot in contact for
    longer than a running stride's flight (AIRBORNE seconds) is a jump.
    """
    root = positions[:, HIPS]
    speed = np.linalg.norm(np.gradient(root[:, [0, 2]], axis=0), axis=1) * fps
    speed = ndimage.uniform_filter1d(speed, max(int(0.25 * fps), 1), mode="nearest")
    stand = np.clip((40.0 - speed) / 30.0, 0, 1)
    jog = np.clip((speed - 200.0) / 60.0, 0, 1)
    walk = np.clip(1 - stand - jog, 0, 1)
    head = positions[:, HEAD, 1] - np.min(positions[:, list(CONTACT_ORDER), 1], axis=1)
    standing_head = standing_head or float(np.percentile(head, 90))
    crouch = np.clip((0.85 * standing_head - head) / (0.15 * standing_head), 0, 1)
    airborne = ~np.any(contacts, axis=1)
    airborne = ndimage.binary_opening(airborne, structure=np.ones(max(int(AIRBORNE * fps), 1)))
    jump = ndimage.uniform_filter1d(airborne.astype(float), max(int(0.2 * fps), 1), mode="nearest")
    jump = np.clip(jump * 2, 0, 1)
    weights = np.stack([stand, walk, jog, crouch, jump, np.zeros_like(stand)], axis=1)
    weights[:, :3] *= (1 - np.maximum(crouch, jump))[:, None]
    total = weights.sum(axis=1, keepdims=True)
    return weights / np.where(total > 0, total, 1)


def both_feet_down(down: np.ndarray) -> np.ndarray:
    """(T,) booleans: each foot has its heel or its toe down, from (T, 4) flags in CONTACT_ORDER."""
    return (down[:, 0] | down[:, 1]) & (down[:, 2] | down[:, 3])


def stepping(contacts: np.ndarray, fps: float) -> np.ndarray:
    """(T,) in [0, 1]: how much each frame steps, from the share of the quarter second around it
    with a foot lifted (neither its heel nor its toe down); half of it lifted counts fully."""
    lifted = ~both_feet_down(np.asarray(contacts) > 0.5)
    share = ndimage.uniform_filter1d(lifted.astype(float), max(int(0.25 * fps), 1), mode="nearest")
    return np.clip(2.0 * share, 0.0, 1.0)


def circular_error(phase_a: np.ndarray, phase_b: np.ndarray) -> np.ndarray:
    """Distance between phases in cycles, in [0, 0.5]."""
    return np.abs(np.mod(phase_a - phase_b + 0.5, 1.0) - 0.5)


TAKE_OFF = 0.25      # seconds before leaving the ground that a jump is labelled (the crouch into it)
LANDING = 0.2        # seconds after landing that it still is (absorbing the impact)


def longest_flight(contacts: np.ndarray) -> np.ndarray:
    """Frames of the longest spell with no heel or toe in contact (`contacts`: (T, 4) bool);
    empty if the feet never leave the ground."""
    airborne = ~np.any(contacts, axis=1)
    spells, count = ndimage.label(airborne)
    if count == 0:
        return np.zeros(0, int)
    longest = np.argmax(ndimage.sum(airborne, spells, index=np.arange(1, count + 1))) + 1
    return np.flatnonzero(spells == longest)


MIN_FLIGHT = 0.12     # seconds with no foot down: a hop, not a missed contact


def _around_flights(flying: np.ndarray, fps: float) -> np.ndarray:
    """(T,) weight 1 from TAKE_OFF seconds before to LANDING seconds after every frame of
    `flying` (T,) bool, ramping over 0.1 s."""
    before, after = int(TAKE_OFF * fps), int(LANDING * fps)
    # A frame counts when a flight frame lies within `before` after it or `after` before it.
    reach = np.convolve(flying.astype(float), np.ones(before + after + 1))[before:before + len(flying)]
    return np.clip(ndimage.uniform_filter1d((reach > 0).astype(float), max(int(0.1 * fps), 1), mode="nearest"), 0, 1)


def jumps_weights(contacts: np.ndarray, fps: float) -> np.ndarray:
    """(T,) jump weight of a clip of several jumps (hops on the spot, jumps forward): around every
    flight (no heel or toe in contact) of at least MIN_FLIGHT seconds."""
    airborne = ~np.any(contacts, axis=1)
    return _around_flights(ndimage.binary_opening(airborne, structure=np.ones(max(int(MIN_FLIGHT * fps), 1), bool)),
                           fps)


def jump_weights(contacts: np.ndarray, fps: float) -> np.ndarray:
    """(T,) jump weight of a clip known to hold one jump: around its longest flight."""
    flying = np.zeros(len(contacts), bool)
    flying[longest_flight(contacts)] = True
    return _around_flights(flying, fps)


def contact_ground(positions: np.ndarray, contacts: np.ndarray):
    """ground(x, z) under a clip that climbs (stairs): the floor height where each heel and toe
    was planted, above that joint's lowest planted height, as steps along the clip's direction
    of travel (flat across it)."""
    root = positions[:, HIPS, [0, 2]].astype(np.float64)
    travel = root[-1] - root[0]
    travel /= max(np.linalg.norm(travel), 1e-9)
    along, heights = [], []
    for column, joint in enumerate(CONTACT_ORDER):
        down = contacts[:, column] > 0.5
        if not down.any():
            continue
        points = positions[down, joint].astype(np.float64)
        along.append(points[:, [0, 2]] @ travel)
        heights.append(points[:, 1] - np.percentile(points[:, 1], 2))
    if not along:
        return lambda x, z: np.zeros(np.broadcast_shapes(np.shape(x), np.shape(z)))
    along, heights = np.concatenate(along), np.concatenate(heights)
    order = np.argsort(along)
    along, heights = along[order], np.maximum.accumulate(heights[order])   # stairs only go up here
    origin = float(root[0] @ travel)

    def ground(x, z):
        s = np.asarray(x, np.float64) * travel[0] + np.asarray(z, np.float64) * travel[1]
        index = np.clip(np.searchsorted(along, s, side="right") - 1, 0, len(along) - 1)
        return np.where(s < min(origin, along[0]), 0.0, heights[index])

    return ground


FOOTSTEP_CELL = 4.0           # units: the grid of a ground recovered from footsteps
FOOTSTEP_SIGMA = 12.0         # units: how far one footstep's height reaches (about a foot's width)
FOOTSTEP_MARGIN = 120.0       # units of ground around the walk (the trajectory and its side probes)
TOE_REST = 3.0                # units: a planted toe joint above the floor (the clips are stood so)


def footstep_ground(positions: np.ndarray, contacts: np.ndarray):
    """ground(x, z) under a walk over uneven ground whose floor was not recorded, recovered from
    where the feet stood (as the PFNN paper fits terrain to footsteps): every planted heel and
    toe gives the floor's height under it (the joint's height above a flat floor taken off: the
    toe's TOE_REST, the heel's its median height above the toe while both are down), and a grid
    holds their Gaussian-weighted mean, smooth between steps and carried on from the nearest
    steps far from them. Vectorised: any array shapes of x and z."""
    positions = positions.astype(np.float64)
    down = contacts > 0.5
    flat = down[:, 0] & down[:, 1]
    heel_above_toe = float(np.median(positions[flat, 4, 1] - positions[flat, 5, 1])) if flat.sum() > 10 else 5.0
    points, heights = [], []
    for column, joint in enumerate(CONTACT_ORDER):
        rest = TOE_REST + (heel_above_toe if joint in (4, 9) else 0.0)
        planted = positions[down[:, column], joint]
        points.append(planted[:, [0, 2]])
        heights.append(planted[:, 1] - rest)
    points, heights = np.concatenate(points), np.concatenate(heights)
    if not len(points):
        return lambda x, z: np.zeros(np.broadcast_shapes(np.shape(x), np.shape(z)))
    low = points.min(axis=0) - FOOTSTEP_MARGIN
    shape = np.ceil((points.max(axis=0) + FOOTSTEP_MARGIN - low) / FOOTSTEP_CELL).astype(int) + 1
    cells = np.round((points - low) / FOOTSTEP_CELL).astype(int)
    weight = np.zeros(shape)
    total = np.zeros(shape)
    np.add.at(weight, (cells[:, 0], cells[:, 1]), 1.0)
    np.add.at(total, (cells[:, 0], cells[:, 1]), heights)
    sigma = FOOTSTEP_SIGMA / FOOTSTEP_CELL
    near_w, near_h = (ndimage.gaussian_filter(a, sigma, mode="constant") for a in (weight, total))
    # Far from any step, the nearby steps' level carries on (a wide kernel) instead of falling to 0.
    far_w, far_h = (ndimage.gaussian_filter(a, 4 * sigma, mode="constant") for a in (weight, total))
    mix = np.clip(near_w / (near_w.max() * 1e-2), 0.0, 1.0)
    grid = mix * near_h / np.maximum(near_w, 1e-12) + (1 - mix) * far_h / np.maximum(far_w, 1e-12)
    grid = np.where(far_w > 1e-12, grid, float(np.median(heights)))

    def ground(x, z):
        x, z = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(z, np.float64))
        coords = np.stack([(x - low[0]) / FOOTSTEP_CELL, (z - low[1]) / FOOTSTEP_CELL])
        return ndimage.map_coordinates(grid, coords.reshape(2, -1), order=1, mode="nearest").reshape(x.shape)

    return ground
