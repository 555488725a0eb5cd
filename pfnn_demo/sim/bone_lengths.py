"""A predicted pose rebuilt on the skeleton's rest bone lengths.

A network predicts every joint's position independently, so its bones stretch and shrink from
frame to frame. `keep_bone_lengths` walks the skeleton from the root, one tree level at a time,
and puts each joint at its rest distance from its (already rebuilt) parent along the predicted
bone's direction. The legs are rebuilt with the two-bone solver instead (two_bone.py), so that
each ankle stays where the network put it (a direction chain would move the feet, and planted
feet would slide): the knee joins the rebuilt hip to the predicted ankle with the rest thigh and
shin, bending the way the network's knee rotation points it (its predicted knee position can
lie on the line, or wander round it); only an ankle out of reach is drawn in, eased in over the
last few units of the leg's reach so that the knee never snaps straight.
"""

from __future__ import annotations

import numpy as np

from .skeleton import DEPTH_LEVELS, LEFT_LEG, PARENTS, REST_OFFSETS, RIGHT_LEG
from .two_bone import SOFT_REACH, place_knees

REST_LENGTHS = np.linalg.norm(REST_OFFSETS, axis=1).astype(np.float32)      # (31,), 0 for helper joints
LEGS = np.array([[leg["hip"], leg["knee"], leg["heel"], leg["toe"]] for leg in (LEFT_LEG, RIGHT_LEG)])
# Bones whose length is measured: the legs (to the toes), spine, neck, head and arms (to the
# wrists); not the index fingers, which the network is not trained on (masked joints, original-demo.md: The
# training recipe).
FINGERS = (22, 29)
# The index fingers carry on straight from their hands (forearm to wrist): the network's own
# finger is untrained, and swung round by up to 18 units in a frame.
_FINGER_HANDS, _FINGER_FOREARMS = PARENTS[PARENTS[list(FINGERS)]], PARENTS[PARENTS[PARENTS[list(FINGERS)]]]
MEASURED = np.setdiff1d(np.flatnonzero(REST_LENGTHS > 1e-6), FINGERS)
# The tree levels without knees, ankles and toes, which the two-joint rule places instead.
_CHAIN_LEVELS = [kept for kept in (np.setdiff1d(level, LEGS[:, 1:]) for level in DEPTH_LEVELS[1:]) if len(kept)]


def keep_bone_lengths(positions: np.ndarray, rotations: np.ndarray | None = None) -> np.ndarray:
    """(..., 31, 3) joint positions with every bone at its rest length (see the module's doc). The
    knees bend the way their `rotations` (..., 31, 3, 3) point them, or without rotations the way
    the predicted knees lie."""
    positions = np.asarray(positions)
    out = positions.copy()
    for joints in _CHAIN_LEVELS:
        parents = PARENTS[joints]
        bone = positions[..., joints, :] - positions[..., parents, :]
        length = np.linalg.norm(bone, axis=-1, keepdims=True)
        # A collapsed bone (helpers are at their parent) keeps the rest direction.
        direction = np.where(length > 1e-6, bone / np.maximum(length, 1e-6),
                             REST_OFFSETS[joints] / np.maximum(REST_LENGTHS[joints, None], 1e-6))
        out[..., joints, :] = out[..., parents, :] + direction * REST_LENGTHS[joints, None]
    hand_way = out[..., _FINGER_HANDS, :] - out[..., _FINGER_FOREARMS, :]
    out[..., FINGERS, :] = out[..., _FINGER_HANDS, :] + hand_way * (
        REST_LENGTHS[list(FINGERS), None] / np.maximum(np.linalg.norm(hand_way, axis=-1, keepdims=True), 1e-6))
    hip, knee, ankle, toe = LEGS.T                                          # (2,) each: both legs at once
    knee_forward = None if rotations is None else rotations[..., knee, :, :][..., 2]
    knees, ankles = place_knees(out[..., hip, :], positions[..., knee, :], positions[..., ankle, :],
                                REST_LENGTHS[knee], REST_LENGTHS[ankle], knee_forward, soft_zone=SOFT_REACH)
    out[..., knee, :], out[..., ankle, :] = knees, ankles
    foot = positions[..., toe, :] - positions[..., ankle, :]
    foot_length = np.maximum(np.linalg.norm(foot, axis=-1, keepdims=True), 1e-6)
    out[..., toe, :] = ankles + foot / foot_length * REST_LENGTHS[toe, None]
    return out.astype(positions.dtype, copy=False)


def bone_length_deviation(positions: np.ndarray) -> np.ndarray:
    """(...,) largest relative deviation |length / rest - 1| over the measured bones of each pose."""
    bones = positions[..., MEASURED, :] - positions[..., PARENTS[MEASURED], :]
    return np.max(np.abs(np.linalg.norm(bones, axis=-1) / REST_LENGTHS[MEASURED] - 1.0), axis=-1)
