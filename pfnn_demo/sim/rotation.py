"""Small batched rotation helpers (numpy): yaw rotations, quaternions, axis-angle matrices.

Quaternions are (w, x, y, z). Rotations about +Y by `yaw` map +Z to (sin yaw, 0, cos yaw).
"""

from __future__ import annotations

import numpy as np


def yaw_of(directions: np.ndarray) -> np.ndarray:
    """Yaw angle of direction vectors (..., 3): atan2(x, z)."""
    return np.arctan2(directions[..., 0], directions[..., 2])


def rotate_y(vectors: np.ndarray, yaw: np.ndarray | float) -> np.ndarray:
    """Rotate (..., 3) vectors by `yaw` about +Y."""
    if np.ndim(yaw) == 0:
        return vectors @ yaw_matrix(float(yaw)).T.astype(vectors.dtype, copy=False)
    c, s = np.cos(yaw), np.sin(yaw)
    shape = np.broadcast_shapes(vectors.shape, np.shape(yaw) + (3,))
    out = np.empty(shape, dtype=vectors.dtype)
    x, z = vectors[..., 0], vectors[..., 2]
    out[..., 0] = c * x + s * z
    out[..., 1] = vectors[..., 1]
    out[..., 2] = c * z - s * x
    return out


def unrotate_y(vectors: np.ndarray, yaw: np.ndarray | float) -> np.ndarray:
    """Inverse of `rotate_y`: express world vectors in the frame rotated by `yaw`."""
    return rotate_y(vectors, -yaw)


def yaw_matrix(yaw: np.ndarray | float, dtype=np.float32) -> np.ndarray:
    """Rotations about +Y, (..., 3, 3) for yaws of any shape (one (3, 3) for a scalar)."""
    c, s = np.cos(yaw), np.sin(yaw)
    out = np.zeros(np.shape(yaw) + (3, 3), dtype=dtype)
    out[..., 0, 0], out[..., 0, 2], out[..., 1, 1], out[..., 2, 0], out[..., 2, 2] = c, s, 1.0, -s, c
    return out


def mix_directions(a: np.ndarray, b: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """Blend horizontal directions (..., 3) as the original does: a slerp between the yaw
    quaternions (the original's mix_directions, original-demo.md), so the shorter way round.

    The way round is the one the float32 quaternion dot product picks, so that an exact reversal
    (a tie, as when the stick is flipped) turns the same way as in the original demo.
    """
    yaw_a = np.arctan2(a[..., 0].astype(np.float64), a[..., 2].astype(np.float64))
    yaw_b = np.arctan2(b[..., 0].astype(np.float64), b[..., 2].astype(np.float64))
    half_a, half_b = yaw_a.astype(np.float32) * np.float32(0.5), yaw_b.astype(np.float32) * np.float32(0.5)
    dot = np.cos(half_a) * np.cos(half_b) + np.sin(half_a) * np.sin(half_b)
    delta = yaw_b - yaw_a
    delta = np.where(dot < 0, delta - np.sign(delta) * 2 * np.pi, delta)
    yaw = yaw_a + np.asarray(t, np.float64) * delta
    out = np.zeros(np.shape(yaw) + (3,), dtype=np.float32)
    out[..., 0] = np.sin(yaw)
    out[..., 2] = np.cos(yaw)
    return out


def quat_exp(log: np.ndarray) -> np.ndarray:
    """Quaternions from log vectors (axis * half-angle), (..., 3) -> (..., 4); tiny angles give identity."""
    theta = np.linalg.norm(log, axis=-1, keepdims=True)
    small = theta < 0.01  # the original's threshold
    safe = np.where(small, 1.0, theta)
    quat = np.concatenate([np.cos(theta), log * (np.sin(theta) / safe)], axis=-1)
    quat = np.where(small, np.array([1.0, 0.0, 0.0, 0.0], dtype=log.dtype), quat)
    return quat / np.linalg.norm(quat, axis=-1, keepdims=True)


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def matrix_to_quat(m: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) -> unit quaternions (..., 4), robust on every branch."""
    m = np.asarray(m, dtype=np.float64)
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    candidates = np.stack([
        np.stack([1 + trace, m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]], -1),
        np.stack([m[..., 2, 1] - m[..., 1, 2], 1 + m[..., 0, 0] - m[..., 1, 1] - m[..., 2, 2],
                  m[..., 0, 1] + m[..., 1, 0], m[..., 0, 2] + m[..., 2, 0]], -1),
        np.stack([m[..., 0, 2] - m[..., 2, 0], m[..., 0, 1] + m[..., 1, 0],
                  1 - m[..., 0, 0] + m[..., 1, 1] - m[..., 2, 2], m[..., 1, 2] + m[..., 2, 1]], -1),
        np.stack([m[..., 1, 0] - m[..., 0, 1], m[..., 0, 2] + m[..., 2, 0], m[..., 1, 2] + m[..., 2, 1],
                  1 - m[..., 0, 0] - m[..., 1, 1] + m[..., 2, 2]], -1),
    ], -2)
    diagonal = np.stack([trace, m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]], -1)
    best = np.argmax(diagonal, axis=-1)
    quat = np.take_along_axis(candidates, best[..., None, None], axis=-2)[..., 0, :]
    return quat / np.linalg.norm(quat, axis=-1, keepdims=True)


def quat_slerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Shortest-arc spherical interpolation of quaternions (..., 4), t broadcasting over (...)."""
    t = np.asarray(t, dtype=np.float64)[..., None]
    dot = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(dot < 0, -b, b)
    angle = np.arccos(np.clip(np.abs(dot), -1.0, 1.0))
    sin_angle = np.sin(angle)
    near = sin_angle < 1e-6
    safe = np.where(near, 1.0, sin_angle)
    wa = np.where(near, 1 - t, np.sin((1 - t) * angle) / safe)
    wb = np.where(near, t, np.sin(t * angle) / safe)
    out = wa * a + wb * b
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


def axis_angle_matrix(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation matrices about unit axes (..., 3) by angles (...,) (Rodrigues)."""
    x, y, z = axis[..., 0], axis[..., 1], axis[..., 2]
    c, s = np.cos(angle), np.sin(angle)
    C = 1 - c
    return np.stack([
        np.stack([c + x * x * C, x * y * C - z * s, x * z * C + y * s], -1),
        np.stack([y * x * C + z * s, c + y * y * C, y * z * C - x * s], -1),
        np.stack([z * x * C - y * s, z * y * C + x * s, c + z * z * C], -1),
    ], -2)


def rotation_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(..., 3, 3) smallest rotations taking directions a onto b (..., 3); the identity where
    they are parallel."""
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    axis = np.cross(a, b)
    sin = np.linalg.norm(axis, axis=-1)
    cos = np.sum(a * b, axis=-1)
    k = axis / np.where(sin > 1e-12, sin, 1.0)[..., None]
    K = np.zeros(k.shape + (3,))
    K[..., 0, 1], K[..., 0, 2], K[..., 1, 2] = -k[..., 2], k[..., 1], -k[..., 0]
    K -= np.swapaxes(K, -1, -2)
    return np.eye(3) + sin[..., None, None] * K + (1 - cos)[..., None, None] * (K @ K)


def matrix_to_euler_zyx(m: np.ndarray) -> np.ndarray:
    """Angles (z, y, x) in radians with m = Rz(z) Ry(y) Rx(x), the CMU BVH channel order; batched."""
    y = np.arcsin(np.clip(-m[..., 2, 0], -1.0, 1.0))
    x = np.arctan2(m[..., 2, 1], m[..., 2, 2])
    z = np.arctan2(m[..., 1, 0], m[..., 0, 0])
    return np.stack([z, y, x], axis=-1)
