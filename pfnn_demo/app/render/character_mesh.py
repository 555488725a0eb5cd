"""The character's body, built from the skeleton: a capsule per bone, smooth skin weights.

Built once in the rest pose (identity joint rotations at the rest positions of
`skeleton.rest_pose_globals`), then skinned on the GPU with linear blend skinning:
skin matrix of joint j = [R_j | p_j] . [I | -rest_j].
"""

from __future__ import annotations

import numpy as np

from ...sim.skeleton import JOINT_NAMES, PARENTS, rest_pose_globals

_INDEX = {name: i for i, name in enumerate(JOINT_NAMES)}

# (bone start joint, bone end joint, radius at start, radius at end). The start joint drives the bone.
BONES = [
    ("Hips", "LeftUpLeg", 9.0, 8.0), ("Hips", "RightUpLeg", 9.0, 8.0),
    ("LeftUpLeg", "LeftLeg", 7.5, 5.5), ("LeftLeg", "LeftFoot", 5.5, 4.0), ("LeftFoot", "LeftToeBase", 4.0, 3.5),
    ("RightUpLeg", "RightLeg", 7.5, 5.5), ("RightLeg", "RightFoot", 5.5, 4.0),
    ("RightFoot", "RightToeBase", 4.0, 3.5),
    ("Hips", "Spine", 11.0, 12.0), ("Spine", "Spine1", 12.0, 13.0), ("Spine1", "Neck1", 7.0, 5.0),
    ("Neck1", "Head", 4.5, 5.0),
    ("Spine1", "LeftArm", 7.0, 5.5), ("LeftArm", "LeftForeArm", 5.0, 4.0), ("LeftForeArm", "LeftHand", 4.0, 3.2),
    ("Spine1", "RightArm", 7.0, 5.5), ("RightArm", "RightForeArm", 5.0, 4.0),
    ("RightForeArm", "RightHand", 4.0, 3.2),
]
# Extra bodies at a joint: (joint, centre offset in the rest pose, radii (x, y, z)).
BLOBS = [
    ("Head", (0.0, 7.0, 1.0), (8.0, 10.0, 9.0)),
    ("LeftHand", (4.0, 0.0, 0.0), (5.0, 2.5, 4.0)),
    ("RightHand", (-4.0, 0.0, 0.0), (5.0, 2.5, 4.0)),
    ("LeftToeBase", (0.0, -0.5, 4.0), (3.8, 2.5, 5.0)),
    ("RightToeBase", (0.0, -0.5, 4.0), (3.8, 2.5, 5.0)),
]
MANNEQUIN_ALBEDO = (1.0, 0.9, 0.6)     # sRGB, before lighting
RINGS, SEGMENTS = 12, 16
CROWD_RINGS, CROWD_SEGMENTS = 6, 8     # the crowd's coarser body: a quarter of the vertices
SHADOW_RINGS, SHADOW_SEGMENTS = 4, 6   # the crowd's body in the shadow map: a shadow needs even less
BLEND = 0.25   # share of a bone near each end that blends with the neighbouring joint


def _orthonormal_frame(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    helper = np.array([0.0, 0.0, 1.0]) if abs(axis[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = np.cross(axis, helper)
    u /= np.linalg.norm(u)
    return u, np.cross(axis, u)


def _sphere_grid(rings: int, segments: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Latitude (0..pi) and longitude grids, and the triangle indices of the (rings+1, segments+1) grid."""
    theta = np.linspace(0, np.pi, rings + 1)
    phi = np.linspace(0, 2 * np.pi, segments + 1)
    theta, phi = np.meshgrid(theta, phi, indexing="ij")
    index = np.arange((rings + 1) * (segments + 1)).reshape(rings + 1, segments + 1)
    a, b, c, d = index[:-1, :-1], index[:-1, 1:], index[1:, :-1], index[1:, 1:]
    triangles = np.stack([a, c, b, b, c, d], axis=-1).reshape(-1, 3)
    return theta, phi, triangles


def build_character_mesh(rings: int = RINGS, segments: int = SEGMENTS) -> tuple[np.ndarray, np.ndarray]:
    """Interleaved vertices (N, 14: position 3, normal 3, joints 4, weights 4) and uint32 indices;
    each capsule and blob a grid of `rings` x `segments` quads."""
    rest = rest_pose_globals().astype(np.float64)
    theta, phi, grid_triangles = _sphere_grid(rings, segments)
    parts_vertices, parts_indices, offset = [], [], 0

    def add(positions, normals, joints, weights):
        nonlocal offset
        count = positions.shape[0]
        parts_vertices.append(np.concatenate([positions, normals, joints, weights], axis=1))
        parts_indices.append(grid_triangles + offset)
        offset += count

    for start_name, end_name, r0, r1 in BONES:
        start, end = _INDEX[start_name], _INDEX[end_name]
        a, b = rest[start], rest[end]
        axis = b - a
        length = np.linalg.norm(axis)
        axis /= length
        u, v = _orthonormal_frame(axis)
        # Capsule: hemisphere at a (theta < pi/2 side points backwards), cylinder, hemisphere at b.
        t = (theta > np.pi / 2).astype(np.float64)          # which end the vertex belongs to
        radius = r0 + t * (r1 - r0)
        direction = (-np.cos(theta))[..., None] * axis + np.sin(theta)[..., None] * (
            np.cos(phi)[..., None] * u + np.sin(phi)[..., None] * v)
        centre = a + t[..., None] * (b - a)
        positions = (centre + radius[..., None] * direction).reshape(-1, 3)
        normals = direction.reshape(-1, 3)
        # Skin weights: the start joint drives the bone; near the start blend with its parent's
        # bone, near the end with the end joint, so that bends stay smooth.
        along = np.clip(((positions - a) @ axis) / length, 0, 1)
        parent = PARENTS[start] if PARENTS[start] >= 0 else start
        w_parent = 0.5 * np.clip(1 - along / BLEND, 0, 1)
        w_end = 0.5 * np.clip((along - (1 - BLEND)) / BLEND, 0, 1)
        w_self = 1 - w_parent - w_end
        joints = np.tile([start, parent, end, start], (len(positions), 1)).astype(np.float64)
        weights = np.stack([w_self, w_parent, w_end, np.zeros_like(w_self)], axis=1)
        add(positions, normals, joints, weights)

    for joint_name, centre_offset, radii in BLOBS:
        joint = _INDEX[joint_name]
        direction = np.stack([np.sin(theta) * np.cos(phi), -np.cos(theta), np.sin(theta) * np.sin(phi)], -1)
        positions = (rest[joint] + np.asarray(centre_offset) + direction * np.asarray(radii)).reshape(-1, 3)
        normals = direction / np.asarray(radii)
        normals = (normals / np.linalg.norm(normals, axis=-1, keepdims=True)).reshape(-1, 3)
        joints = np.tile([joint, joint, joint, joint], (len(positions), 1)).astype(np.float64)
        weights = np.tile([1.0, 0.0, 0.0, 0.0], (len(positions), 1))
        add(positions, normals, joints, weights)

    vertices = np.concatenate(parts_vertices).astype(np.float32)
    vertices[:, 6:10], vertices[:, 10:14] = sort_influences(vertices[:, 6:10], vertices[:, 10:14])
    indices = np.concatenate(parts_indices).astype(np.uint32).ravel()
    return vertices, indices


def sort_influences(joints: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each vertex's (joint, weight) pairs, heaviest first: the skinning shader stops at the first
    zero weight (shaders/skinning.glsl)."""
    order = np.argsort(-weights, axis=1, kind="stable")
    return np.take_along_axis(joints, order, axis=1), np.take_along_axis(weights, order, axis=1)


def skin_matrices(global_transforms: np.ndarray) -> np.ndarray:
    """Skinning matrices (..., J, 4, 4): the posed global transform times the inverse rest transform."""
    rest = rest_pose_globals()
    skin = global_transforms.astype(np.float32).copy()
    skin[..., :3, 3] -= (skin[..., :3, :3] @ rest[:, :, None])[..., 0]
    return skin
