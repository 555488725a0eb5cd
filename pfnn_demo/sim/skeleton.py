"""The 31-joint skeleton: names, parents, rest offsets, and batched forward kinematics.

Units are the demo's (about 1 cm), y up; the character faces +Z with its left side on +X.
The rest offsets are the CMU hierarchy's (subject 02, mocap.cs.cmu.edu) scaled by 5.6444, the
factor the original PFNN pipeline applies to CMU-style BVH data.
"""

from __future__ import annotations

import dataclasses

import numpy as np

JOINT_NAMES = (
    "Hips", "LHipJoint", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase",
    "RHipJoint", "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase",
    "LowerBack", "Spine", "Spine1", "Neck", "Neck1", "Head",
    "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand", "LeftFingerBase", "LeftHandIndex1", "LThumb",
    "RightShoulder", "RightArm", "RightForeArm", "RightHand", "RightFingerBase", "RightHandIndex1", "RThumb",
)
JOINT_COUNT = len(JOINT_NAMES)
PARENTS = np.array([-1, 0, 1, 2, 3, 4, 0, 6, 7, 8, 9, 0, 11, 12, 13, 14, 15, 13, 17, 18, 19, 20, 21, 20,
                    13, 24, 25, 26, 27, 28, 27], dtype=np.int32)

BVH_TO_DEMO_UNITS = 5.6444

# Local rest translation of each joint relative to its parent (CMU subject 02, in BVH units).
_REST_OFFSETS_BVH = np.array([
    [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.36306, -1.79463, 0.83929], [2.44811, -6.72613, 0.0],
    [2.5622, -7.03959, 0.0], [0.15764, -0.43311, 2.32255],
    [0.0, 0.0, 0.0], [-1.30552, -1.79463, 0.83929], [-2.54253, -6.98555, 0.0],
    [-2.56826, -7.05623, 0.0], [-0.16473, -0.45259, 2.36315],
    [0.0, 0.0, 0.0], [0.02827, 2.03559, -0.19338], [0.05672, 2.04885, -0.04275], [0.0, 0.0, 0.0],
    [-0.05417, 1.74624, 0.17202], [0.10407, 1.76136, -0.12397],
    [0.0, 0.0, 0.0], [3.36241, 1.20089, -0.31121], [4.983, 0.0, 0.0], [3.48356, 0.0, 0.0],
    [0.0, 0.0, 0.0], [0.71526, 0.0, 0.0], [0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0], [-3.1366, 1.37405, -0.40465], [-5.24190, 0.0, 0.0], [-3.44417, 0.0, 0.0],
    [0.0, 0.0, 0.0], [-0.62253, 0.0, 0.0], [0.0, 0.0, 0.0],
], dtype=np.float64)
REST_OFFSETS = (_REST_OFFSETS_BVH * BVH_TO_DEMO_UNITS).astype(np.float32)



@dataclasses.dataclass(frozen=True)
class Skeleton:
    """A skeleton and the joints the demo refers to by role (indices into `names`)."""

    names: tuple[str, ...]
    parents: np.ndarray
    rest_offsets: np.ndarray
    hips: int
    head: int
    legs: tuple[dict, dict]          # left, right: {"root", "hip", "knee", "heel", "toe"}
    hands: tuple[int, int]           # left, right

    @property
    def contact_joints(self) -> list[int]:
        """Left heel, left toe, right heel, right toe: the order of the network's contacts."""
        return [leg[part] for leg in self.legs for part in ("heel", "toe")]


CANONICAL = Skeleton(JOINT_NAMES, PARENTS, REST_OFFSETS, hips=0, head=16,
                     legs=({"root": 1, "hip": 2, "knee": 3, "heel": 4, "toe": 5},
                           {"root": 6, "hip": 7, "knee": 8, "heel": 9, "toe": 10}),
                     hands=(20, 27))
# Joints the demo refers to by role, from the canonical skeleton.
HIPS = CANONICAL.hips
LEFT_LEG, RIGHT_LEG = CANONICAL.legs
HEAD = CANONICAL.head
CONTACT_JOINTS = CANONICAL.contact_joints


def depth_levels(parents: np.ndarray) -> list[np.ndarray]:
    """Joints by depth in the tree (parents listed before children; -1 marks a root)."""
    depth = np.zeros(len(parents), dtype=np.int32)
    for joint, parent in enumerate(parents):  # parents precede children
        depth[joint] = 0 if parent < 0 else depth[parent] + 1
    return [np.flatnonzero(depth == level) for level in range(depth.max() + 1)]


DEPTH_LEVELS = depth_levels(PARENTS)


def forward_kinematics(local: np.ndarray, parents: np.ndarray = PARENTS,
                       levels: list[np.ndarray] | None = None) -> np.ndarray:
    """Global 4x4 transforms from local ones, (..., J, 4, 4); one batched product per tree level."""
    levels = DEPTH_LEVELS if levels is None else levels
    result = np.empty_like(local)
    result[..., levels[0], :, :] = local[..., levels[0], :, :]
    for joints in levels[1:]:
        result[..., joints, :, :] = result[..., parents[joints], :, :] @ local[..., joints, :, :]
    return result


def rigid_inverse(transforms: np.ndarray) -> np.ndarray:
    """Inverse of rigid 4x4 transforms (rotation + translation), batched."""
    rotation_t = np.swapaxes(transforms[..., :3, :3], -1, -2)
    inverse = np.zeros_like(transforms)
    inverse[..., :3, :3] = rotation_t
    inverse[..., :3, 3] = -(rotation_t @ transforms[..., :3, 3, None])[..., 0]
    inverse[..., 3, 3] = 1.0
    return inverse


def local_from_global(global_transforms: np.ndarray, parents: np.ndarray = PARENTS) -> np.ndarray:
    """local[0] = global[0]; local[i] = global[parent]^-1 global[i] (original-demo.md: Using the output)."""
    local = global_transforms.copy()
    children = np.flatnonzero(parents >= 0)
    local[..., children, :, :] = rigid_inverse(global_transforms[..., parents[children], :, :]) \
        @ global_transforms[..., children, :, :]
    return local


def rest_pose_globals() -> np.ndarray:
    """Global rest positions (J, 3) from the rest offsets, root at the origin."""
    local = np.tile(np.eye(4, dtype=np.float32), (JOINT_COUNT, 1, 1))
    local[:, :3, 3] = REST_OFFSETS
    return forward_kinematics(local)[:, :3, 3]
