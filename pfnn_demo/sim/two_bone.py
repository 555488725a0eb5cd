"""The two-bone leg (hip, knee, ankle): one solver for the bone-length rebuild and the foot IK.

A leg reaching a point has a circle of possible knees; what picks one is the bend direction,
the direction from the hip-ankle line towards the knee. Taken from a predicted knee's position
it is undefined when that knee lies on the line (a nearly straight leg, or a network's leg that
shrank onto it) and flips when the knee crosses it: the drawn knee then swings round in a frame
or two. A network's knee position also wanders round the line now and then (in a crouch walk
the shipped network's stance knee swung from 16 to 159 degrees off forward in 15 frames) while
the knee's predicted rotation kept facing forwards within 10 degrees.

So the bend direction is taken from the knee's rotation: its forward axis (local +Z, the way
the knee points in the rest pose), across the hip-ankle line. It is as continuous as the
network's rotations, and a knee never bends backwards. Where only positions are known (captured
poses, whose knees are reliable), the knee's own direction is used.

Everything is batched over leading axes (characters, legs); no per-leg Python loops.
"""

from __future__ import annotations

import numpy as np

from .rotation import rotation_between

# Units: a leg eases into full extension over this last stretch of its reach (`soft_reach`).
# Measured on 100 s of random play and on the urban scene's random play: the drawn frames in
# which a joint snaps (an acceleration over 20,000 units/s^2) fell from 69 to 45 and from 221
# to 150 with 2 units (the original network's: 40 and 137); 4 units gained 2 and 6 frames more
# but hold a heel up to zone / e short of a target at the leg's full reach.
SOFT_REACH = 2.0
# Units: a drawn knee closer than this to its hip-ankle line is leaned forwards in the foot IK,
# where its own plane is undefined.
STRAIGHT_LEG = 3.0


def soft_reach(distance: np.ndarray, longest, zone: float) -> np.ndarray:
    """Hip-ankle distances eased towards `longest` over the last `zone` units (Harris's soft IK):
    a leg reaches a distance d < longest - zone exactly, and comes ever closer to straight beyond.
    A hard limit makes the knee's sideways offset sqrt(longest - d): infinitely fast as the leg
    straightens, so a target passing in and out of reach snaps the knee out and back. `zone` 0
    is the hard limit."""
    if zone <= 0:
        return np.minimum(distance, longest)
    start = longest - zone
    return np.where(distance > start, start + zone * -np.expm1(-(distance - start) / zone), distance)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-9)


def _off_line(vectors: np.ndarray, along: np.ndarray) -> np.ndarray:
    """The part of `vectors` (..., 3) across the unit directions `along`."""
    return vectors - np.sum(vectors * along, axis=-1, keepdims=True) * along


def _across(hips: np.ndarray, knees: np.ndarray, ankles: np.ndarray, forward: np.ndarray):
    """The knee's offset from the hip-ankle line, and `forward` across that line (unit)."""
    along = _unit(ankles - hips)
    offset = _off_line(knees - hips, along)
    ahead = _off_line(forward, along)
    ahead_length = np.linalg.norm(ahead, axis=-1, keepdims=True)
    # A forward along the leg has no part across it: the knee keeps its own direction then.
    ahead = np.where(ahead_length > 1e-3, ahead / np.maximum(ahead_length, 1e-9), _unit(offset))
    return offset, ahead


def bend_directions(hips: np.ndarray, knees: np.ndarray, ankles: np.ndarray,
                    knee_forward: np.ndarray | None = None) -> np.ndarray:
    """Unit directions (..., 3) from the hip-ankle line towards the knee, perpendicular to it:
    the knees' forward axes `knee_forward` (..., 3) across the line, or without them the given
    knees' own directions (undefined for a knee on the line)."""
    if knee_forward is None:
        return _unit(_off_line(knees - hips, _unit(ankles - hips)))
    return _across(hips, knees, ankles, knee_forward)[1]


def _kept_bend_directions(hips: np.ndarray, knees: np.ndarray, ankles: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """A drawn knee's own bend direction, leaned towards `forward` only within STRAIGHT_LEG of the
    line."""
    offset, ahead = _across(hips, knees, ankles, forward)
    distance = np.linalg.norm(offset, axis=-1, keepdims=True)
    lean = STRAIGHT_LEG * np.clip(1.0 - distance / STRAIGHT_LEG, 0.0, 1.0) ** 2
    return _unit(offset + lean * ahead)


def place_knees(hips: np.ndarray, knees: np.ndarray, ankles: np.ndarray, thigh, shin,
                knee_forward: np.ndarray | None = None, slack: float = 1e-3,
                soft_zone: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Knee positions (..., 3) joining each hip to its ankle with bones of length `thigh` and
    `shin`, bending along `bend_directions(hips, knees, ankles, knee_forward)`; and the ankles, drawn
    in along the leg where out of reach (to `slack` short of it; eased in over the last
    `soft_zone` units of the reach, see `soft_reach`)."""
    thigh, shin = np.asarray(thigh), np.asarray(shin)
    reach = ankles - hips
    length = np.linalg.norm(reach, axis=-1, keepdims=True)
    along = reach / np.maximum(length, 1e-9)
    longest = (thigh + shin)[..., None] - slack
    distance = np.clip(soft_reach(length, longest, soft_zone), np.abs(thigh - shin)[..., None] + slack, longest)
    pole = bend_directions(hips, knees, ankles, knee_forward)
    cos_hip = np.clip((thigh[..., None] ** 2 + distance ** 2 - shin[..., None] ** 2)
                      / (2 * thigh[..., None] * distance), -1, 1)
    knees = hips + thigh[..., None] * (cos_hip * along + np.sqrt(1 - cos_hip ** 2) * pole)
    return knees, hips + distance * along


def leg_turns(hips: np.ndarray, knees: np.ndarray, ankles: np.ndarray, targets: np.ndarray,
              knee_forward: np.ndarray, slack: float, soft_zone: float = SOFT_REACH) -> tuple[np.ndarray, np.ndarray]:
    """World rotations (..., 3, 3) of the thigh (about the hip) and of the shin (about the knee)
    that bring the ankle to `targets` with the leg's own bone lengths (to `slack` short of a
    target out of reach, eased over the last `soft_zone` units: `soft_reach`), the knee on its
    own bend direction (leaned towards the knee's forward axis `knee_forward` where the leg is
    straight).

    The original demo's two-joint IK, in its three steps: bend the knee in the leg's plane so
    that the hip-ankle distance is the hip-target distance, then swing the leg about the hip
    onto the target. With a knee STRAIGHT_LEG or more from its line and `soft_zone` 0 the result
    is the original's."""
    thigh = np.linalg.norm(knees - hips, axis=-1)
    shin = np.linalg.norm(ankles - knees, axis=-1)
    along = _unit(ankles - hips)
    pole = _kept_bend_directions(hips, knees, ankles, knee_forward)
    reach = np.clip(soft_reach(np.linalg.norm(targets - hips, axis=-1), thigh + shin - slack, soft_zone),
                    slack, thigh + shin - slack)
    cos_hip = np.clip((thigh ** 2 + reach ** 2 - shin ** 2) / (2 * thigh * reach), -1.0, 1.0)[..., None]
    thigh_way = cos_hip * along + np.sqrt(1 - cos_hip ** 2) * pole
    shin_way = reach[..., None] * along - thigh[..., None] * thigh_way
    bend = rotation_between(knees - hips, thigh_way)
    unbend = rotation_between(np.einsum("...ij,...j->...i", bend, ankles - knees), shin_way)
    swing = rotation_between(along, targets - hips)
    return swing @ bend, swing @ unbend @ bend
