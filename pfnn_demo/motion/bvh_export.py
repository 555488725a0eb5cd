"""Played motion as BVH: world joint positions and rotations -> a `Motion` on the 31-joint skeleton.

The hierarchy carries the skeleton's rest offsets (demo units) and CMU's channel layout: the root
has `Xposition Yposition Zposition Zrotation Yrotation Xrotation`, every other joint
`Zrotation Yrotation Xrotation`. A network's pose need not keep the rest bone lengths (its joint
positions are predicted, not derived from rotations), so a joint whose recorded offset from its
parent ever strays from the rest offset by more than `tolerance` gets translation channels too,
holding that offset in the parent's frame. Any BVH reader then puts every joint exactly where it
was drawn, and a pose that does keep its bone lengths stays a plain rotations-only file.
"""

from __future__ import annotations

import numpy as np

from ..sim.rotation import matrix_to_euler_zyx
from ..sim.skeleton import JOINT_NAMES, PARENTS, REST_OFFSETS
from .bvh import Motion

POSITION = ["Xposition", "Yposition", "Zposition"]
ROTATION = ["Zrotation", "Yrotation", "Xrotation"]


def local_pose(positions: np.ndarray, rotations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-joint rotation and translation in the parent's frame (the root's in the world), float64."""
    positions, rotations = positions.astype(np.float64), rotations.astype(np.float64)
    children = np.flatnonzero(PARENTS >= 0)
    parent_t = np.swapaxes(rotations[:, PARENTS[children]], -1, -2)
    local_rotations, local_translations = rotations.copy(), positions.copy()
    local_rotations[:, children] = parent_t @ rotations[:, children]
    offsets = positions[:, children] - positions[:, PARENTS[children]]
    local_translations[:, children] = (parent_t @ offsets[..., None])[..., 0]
    return local_rotations, local_translations


def motion_from_world(positions: np.ndarray, rotations: np.ndarray, frame_time: float,
                      tolerance: float = 1e-3) -> Motion:
    """(T, 31, 3) world positions and (T, 31, 3, 3) world rotations -> BVH motion in the same units."""
    if positions.ndim != 3 or positions.shape[1:] != (len(JOINT_NAMES), 3) or len(positions) == 0:
        raise ValueError(f"expected (T > 0, {len(JOINT_NAMES)}, 3) joint positions, got {positions.shape}")
    local_rotations, local_translations = local_pose(positions, rotations)
    euler = np.degrees(matrix_to_euler_zyx(local_rotations))       # (T, J, 3) as Z, Y, X
    stray = np.abs(local_translations - REST_OFFSETS.astype(np.float64)).max(axis=(0, 2))
    channels, columns = [], []
    for joint in range(len(JOINT_NAMES)):
        if PARENTS[joint] < 0 or stray[joint] > tolerance:
            channels.append(POSITION + ROTATION)
            columns += [local_translations[:, joint], euler[:, joint]]
        else:
            channels.append(list(ROTATION))
            columns.append(euler[:, joint])
    leaves = {j: np.zeros(3) for j in range(len(JOINT_NAMES)) if not np.any(PARENTS == j)}
    return Motion(list(JOINT_NAMES), PARENTS.astype(int), REST_OFFSETS.astype(np.float64), channels,
                  np.concatenate(columns, axis=1), frame_time, leaves)


def joints_with_translations(motion: Motion) -> list[str]:
    """Names of the non-root joints whose bone length varies (those given position channels)."""
    return [name for name, joint_channels, parent in zip(motion.names, motion.channels, motion.parents)
            if parent >= 0 and "Xposition" in joint_channels]
