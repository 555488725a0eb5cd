"""A predicted pose rebuilt on the skeleton's rest bone lengths.

A network predicts every joint's position independently, so its bones stretch and shrink from
frame to frame. `keep_bone_lengths` walks the skeleton from the root, one tree level at a time,
and puts each joint at its rest distance from its (already rebuilt) parent along the predicted
bone's direction. The legs are rebuilt with the two-joint rule instead, so that each ankle stays
where the network put it (a direction chain would move the feet, and planted feet would slide):
the knee bends in the plane of the predicted knee to join the rebuilt hip to the predicted ankle
with the rest thigh and shin; only an ankle out of reach is drawn in.
"""

from __future__ import annotations

import numpy as np

from .skeleton import DEPTH_LEVELS, LEFT_LEG, PARENTS, REST_OFFSETS, RIGHT_LEG

REST_LENGTHS = np.linalg.norm(REST_OFFSETS, axis=1).astype(np.float32)      # (31,), 0 for helper joints
LEGS = np.array([[leg["hip"], leg["knee"], leg["heel"], leg["toe"]] for leg in (LEFT_LEG, RIGHT_LEG)])
# Bones whose length is measured: the legs (to the toes), spine, neck, head and arms (to the
# wrists); not the index fingers, which the network is not trained on (masked joints, spec 9.5).
FINGERS = (22, 29)
MEASURED = np.setdiff1d(np.flatnonzero(REST_LENGTHS > 1e-6), FINGERS)
# The tree levels without knees, ankles and toes, which the two-joint rule places instead.
_CHAIN_LEVELS = [kept for kept in (np.setdiff1d(level, LEGS[:, 1:]) for level in DEPTH_LEVELS[1:]) if len(kept)]


def two_bone_knees(hips: np.ndarray, knees: np.ndarray, ankles: np.ndarray, thigh, shin) -> tuple[np.ndarray, np.ndarray]:
    """Knee positions (..., 3) joining each hip to its ankle with bones of length `thigh` and
    `shin`, bending in the plane of the given knee; and the ankles, drawn in where out of reach."""
    thigh, shin = np.asarray(thigh), np.asarray(shin)
    reach = ankles - hips
    length = np.linalg.norm(reach, axis=-1, keepdims=True)
    along = reach / np.maximum(length, 1e-9)
    distance = np.clip(length, np.abs(thigh - shin)[..., None] + 1e-3, (thigh + shin)[..., None] - 1e-3)
    pole = knees - hips
    pole = pole - np.sum(pole * along, axis=-1, keepdims=True) * along
    pole = pole / np.maximum(np.linalg.norm(pole, axis=-1, keepdims=True), 1e-9)
    cos_hip = np.clip((thigh[..., None] ** 2 + distance ** 2 - shin[..., None] ** 2)
                      / (2 * thigh[..., None] * distance), -1, 1)
    knees = hips + thigh[..., None] * (cos_hip * along + np.sqrt(1 - cos_hip ** 2) * pole)
    return knees, hips + distance * along


def keep_bone_lengths(positions: np.ndarray) -> np.ndarray:
    """(..., 31, 3) joint positions with every bone at its rest length (see the module's doc)."""
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
    hip, knee, ankle, toe = LEGS.T                                          # (2,) each: both legs at once
    knees, ankles = two_bone_knees(out[..., hip, :], positions[..., knee, :], positions[..., ankle, :],
                                   REST_LENGTHS[knee], REST_LENGTHS[ankle])
    out[..., knee, :], out[..., ankle, :] = knees, ankles
    foot = positions[..., toe, :] - positions[..., ankle, :]
    foot_length = np.maximum(np.linalg.norm(foot, axis=-1, keepdims=True), 1e-6)
    out[..., toe, :] = ankles + foot / foot_length * REST_LENGTHS[toe, None]
    return out.astype(positions.dtype, copy=False)


def bone_length_deviation(positions: np.ndarray) -> np.ndarray:
    """(...,) largest relative deviation |length / rest - 1| over the measured bones of each pose."""
    bones = positions[..., MEASURED, :] - positions[..., PARENTS[MEASURED], :]
    return np.max(np.abs(np.linalg.norm(bones, axis=-1) / REST_LENGTHS[MEASURED] - 1.0), axis=-1)
