"""Foot IK (spec 7) for N characters at once: lock feet in contact, keep them on the terrain,
align heels and toes.

Every quantity carries a leading (N, 2) axis pair: character, then leg (left, right). The maths
is the original's, step by step, as batched 4x4 transforms (column vectors: rotation in [:3, :3],
translation in [:3, 3]); a step the original skips for a leg (a heel already on its target, a
foot out of contact) is computed anyway and discarded with a mask.
"""

from __future__ import annotations

import numpy as np

from .rotation import axis_angle_matrix
from .skeleton import LEFT_LEG, RIGHT_LEG
from .terrain import Heightmap

FADE = 0.075
THRESHOLD = 0.8             # the original demo's lock threshold, on the original network's toe contacts
# A network trained by pfnn-demo (heel and toe contacts, labelled 0 or 1) says a foot is down
# when its contact passes the labels' midpoint. Its contacts for a planted foot often settle at
# 0.6-0.8: at the original's 0.8 such a foot was never locked and crept 3-6 units/s while standing.
LABELLED_THRESHOLD = 0.5
SMOOTHNESS = 0.5
HEEL_HEIGHT = 5.0
TOE_HEIGHT = 4.0
EPSILON = 1.0
HEEL_BEND = 4.0
TOE_BEND_UP = 10.0

ROLES = ("root", "hip", "knee", "heel", "toe")
# Joint of each role on each leg: (5 roles, 2 legs).
LEG_JOINTS = np.array([[LEFT_LEG[role], RIGHT_LEG[role]] for role in ROLES])
# Effector slots, as the original: 0 left heel, 1 right heel, 2 left toe, 3 right toe; here (N, 2 ends, 2 legs).
HEEL, TOE = 0, 1


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross products of (..., 3) vectors (np.cross's axis handling costs more than the sums here)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _normalize(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _safe_normalize(v: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    length = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(length > 1e-6, v / np.where(length > 1e-6, length, 1.0), fallback)


def _angle(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.arccos(np.clip(np.sum(_normalize(u) * _normalize(v), axis=-1), -1.0, 1.0))


def _rigid_inverse(m: np.ndarray) -> np.ndarray:
    rotation = np.swapaxes(m[..., :3, :3], -1, -2)
    out = np.zeros_like(m)
    out[..., :3, :3] = rotation
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", rotation, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def _mix_transforms(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Slerp of the rotations (shortest arc), lerp of the translations (spec 6.1 mix_transforms).

    The slerp as a rotation by a fraction `t` of the relative rotation from a to b (the same
    rotation as a quaternion slerp, with fewer operations than going through quaternions).
    """
    ra, rb = a[..., :3, :3], b[..., :3, :3]
    relative = np.swapaxes(ra, -1, -2) @ rb
    cosine = np.minimum(np.maximum((relative[..., 0, 0] + relative[..., 1, 1] + relative[..., 2, 2] - 1) / 2, -1.0), 1.0)
    axis = np.stack([relative[..., 2, 1] - relative[..., 1, 2], relative[..., 0, 2] - relative[..., 2, 0],
                     relative[..., 1, 0] - relative[..., 0, 1]], axis=-1)
    length = np.linalg.norm(axis, axis=-1, keepdims=True)
    turn = np.where(length[..., 0] > 1e-12, np.arccos(cosine), 0.0)
    axis = np.where(length > 1e-12, axis / np.where(length > 1e-12, length, 1.0), (1.0, 0.0, 0.0))
    out = np.zeros_like(a)
    out[..., :3, :3] = ra @ axis_angle_matrix(axis, t * turn)
    out[..., :3, 3] = a[..., :3, 3] + t[..., None] * (b[..., :3, 3] - a[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def _ground_frame(forward: np.ndarray, across: np.ndarray, origin: np.ndarray) -> np.ndarray:
    """The heel's or toe's target frame: z along `forward`, x across, y down, at `origin`
    (spec 7.3-7.4: columns (X, -U, Z) with U = normalize(S x Z), X = Z x U)."""
    z = _normalize(forward)
    up = _normalize(_cross(_normalize(across), z))
    x = _cross(z, up)
    out = np.zeros(forward.shape[:-1] + (4, 4))
    out[..., :3, 0], out[..., :3, 1], out[..., :3, 2], out[..., :3, 3] = x, -up, z, origin
    out[..., 3, 3] = 1.0
    return out


def _clamp_heights(points: np.ndarray, terrain: Heightmap, lift: float, low: np.ndarray, high: np.ndarray) -> None:
    """Points (K, ..., 3) onto the terrain plus `lift`, kept within [low, high] (...) each."""
    ground = terrain.sample(points[..., 0], points[..., 2]) + lift
    points[..., 1] = np.minimum(np.maximum(ground, low), high)


class FootIK:
    """The IK state (locks, locked positions, smoothed ground heights) of N characters."""

    def __init__(self, count: int = 1, use_heel_contacts: bool = False):
        # The original locks on toe contacts only; heel contacts can be added (max of heel and toe).
        # A foot locks while its contact is at least the threshold of its kind of contacts: the
        # original's on toe contacts, the labels' midpoint on heel and toe contacts (pfnn-demo's).
        self.use_heel_contacts = use_heel_contacts
        self.threshold = LABELLED_THRESHOLD if use_heel_contacts else THRESHOLD
        self.lock = np.zeros((count, 2, 2))          # (N, heel/toe, leg)
        self.position = np.zeros((count, 2, 2, 3))
        self.height = np.zeros((count, 2, 2))

    def reset(self, index, height) -> None:
        self.lock[index] = 0.0
        self.position[index] = 0.0
        self.height[index] = np.asarray(height, np.float64)[..., None, None]

    def leg_contacts(self, contacts: np.ndarray) -> np.ndarray:
        """Per-leg contact weights (N, 2) from the network's (N, 4) (L heel, L toe, R heel, R toe);
        (2,) from one character's (4,)."""
        c = np.asarray(contacts, np.float64)
        if self.use_heel_contacts:
            return np.stack([np.maximum(c[..., 0], c[..., 1]), np.maximum(c[..., 2], c[..., 3])], axis=-1)
        return c[..., [1, 3]]

    def solve(self, global_pose: np.ndarray, contacts: np.ndarray, terrain: Heightmap,
              active: np.ndarray | None = None) -> np.ndarray:
        """Global transforms (N, J, 4, 4) of the network's poses -> the same after IK. Only the
        `active` characters (N,) are solved and have their locks updated; the others pass through."""
        count = len(global_pose)
        active = np.ones(count, bool) if active is None else np.asarray(active, bool)
        contact = self.leg_contacts(contacts)                                   # (N, 2)
        g = {role: global_pose[:, LEG_JOINTS[r]].astype(np.float64) for r, role in enumerate(ROLES)}   # (N, 2, 4, 4)
        local = {child: _rigid_inverse(g[parent]) @ g[child]
                 for parent, child in zip(ROLES[:-1], ROLES[1:])}

        # 7.1 targets: the locked position where locked, never below the smoothed terrain.
        animated = np.stack([g["heel"][..., :3, 3], g["toe"][..., :3, 3]], axis=1)            # (N, 2, 2, 3)
        keys = animated + self.lock[..., None] * (self.position - animated)
        lift = np.array([HEEL_HEIGHT, TOE_HEIGHT])[None, :, None]
        ground = terrain.sample(keys[..., 0], keys[..., 2]).astype(np.float64)
        height = self.height + SMOOTHNESS * (ground + lift - self.height)
        keys[..., 1] = np.maximum(keys[..., 1], height)

        weight = np.clip(2.5 * contact, 0.0, 1.0)                               # (N, 2)
        self._two_joint(g, local, keys[:, HEEL])
        self._forward(g, local)
        touching = weight > 0
        if np.any(touching):
            heel = self._orient_heel(g, local, keys[:, TOE], weight, terrain)
            local["heel"] = np.where(touching[..., None, None], heel, local["heel"])
            self._forward(g, local)
            toe = self._orient_toe(g, local, weight, terrain)
            local["toe"] = np.where(touching[..., None, None], toe, local["toe"])
            self._forward(g, local)

        # 7.5 locks: engage on contact, fade out after it. A foot back in contact while its lock
        # is still fading locks afresh where it is (the original waits for the fade to reach 0:
        # meanwhile the foot stays partly pinned to its old spot and slides along with the pose).
        heel_lock = self.lock[:, HEEL]
        engage = active[:, None] & (heel_lock < 1) & (contact >= self.threshold)
        release = active[:, None] & (heel_lock > 0) & (contact < self.threshold)
        lock = np.where(release[:, None], np.clip(self.lock - FADE, 0.0, 1.0), self.lock)
        self.lock = np.where(engage[:, None], 1.0, lock)
        reached = np.stack([g["heel"][..., :3, 3], g["toe"][..., :3, 3]], axis=1)
        self.position = np.where(engage[:, None, :, None], reached, self.position)
        self.height = np.where(active[:, None, None], height, self.height)

        out = global_pose.copy()
        for r, role in enumerate(ROLES[1:], start=1):
            out[:, LEG_JOINTS[r]] = np.where(active[:, None, None, None], g[role].astype(np.float32),
                                             out[:, LEG_JOINTS[r]])
        return out

    @staticmethod
    def _forward(g: dict, local: dict) -> None:
        g["hip"] = g["root"] @ local["hip"]
        g["knee"] = g["hip"] @ local["knee"]
        g["heel"] = g["knee"] @ local["heel"]
        g["toe"] = g["heel"] @ local["toe"]

    @staticmethod
    def _two_joint(g: dict, local: dict, target: np.ndarray) -> None:
        """Bend hip and knee so the heel reaches `target` (N, 2, 3) (spec 7.2)."""
        a, b, c = g["hip"][..., :3, 3], g["knee"][..., :3, 3], g["heel"][..., :3, 3]
        bend = np.linalg.norm(c - target, axis=-1) >= EPSILON                  # (N, 2)
        lc, la = np.linalg.norm(b - a, axis=-1), np.linalg.norm(b - c, axis=-1)
        lt = np.clip(np.linalg.norm(target - a, axis=-1), EPSILON, lc + la - EPSILON)
        alpha0 = _angle(c - a, b - a)
        beta0 = _angle(a - b, c - b)
        gamma = _angle(c - a, target - a)
        alpha1 = np.arccos(np.clip((la * la - lc * lc - lt * lt) / (-2 * lc * lt), -1.0, 1.0))
        beta1 = np.arccos(np.clip((lt * lt - lc * lc - la * la) / (-2 * lc * la), -1.0, 1.0))
        # A straight leg has no bending plane: bend about the hip's own x axis then.
        hip_x = g["hip"][..., :3, 0]
        n0 = _safe_normalize(_cross(b - a, c - a), hip_x)
        n1 = _safe_normalize(_cross(target - a, c - a), hip_x)
        r0 = axis_angle_matrix(-n0, alpha1 - alpha0)
        r1 = axis_angle_matrix(-n0, beta1 - beta0)
        r2 = axis_angle_matrix(-n1, gamma)
        hip_rotation, knee_rotation = g["hip"][..., :3, :3], g["knee"][..., :3, :3]
        root_inverse = np.swapaxes(g["root"][..., :3, :3], -1, -2)
        new_hip = root_inverse @ r2 @ r0 @ hip_rotation
        new_knee = np.swapaxes(hip_rotation, -1, -2) @ r1 @ knee_rotation
        for role, rotation in (("hip", new_hip), ("knee", new_knee)):
            local[role] = local[role].copy()
            local[role][..., :3, :3] = np.where(bend[..., None, None], rotation, local[role][..., :3, :3])

    @staticmethod
    def _orient_heel(g: dict, local: dict, toe_key: np.ndarray, weight: np.ndarray, terrain: Heightmap) -> np.ndarray:
        """Point the heel at the toe target, level across with the terrain (spec 7.3)."""
        h = g["heel"][..., :3, 3]
        across = 10.0 * g["heel"][..., :3, 0]
        low, high = h[..., 1] - HEEL_BEND, h[..., 1] + HEEL_BEND
        sides = np.stack([h + across, h - across])
        _clamp_heights(sides, terrain, TOE_HEIGHT, low, high)
        s0, s1 = sides
        f = toe_key.copy()
        f[..., 1] = np.clip(f[..., 1], low, high)
        target_local = _rigid_inverse(g["knee"]) @ _ground_frame(f - h, s0 - s1, h)
        return _mix_transforms(local["heel"], target_local, weight)

    @staticmethod
    def _orient_toe(g: dict, local: dict, weight: np.ndarray, terrain: Heightmap) -> np.ndarray:
        """Lay the toe on the terrain (spec 7.4; the original's left-toe sample bug is fixed)."""
        o = g["toe"][..., :3, 3]
        low, high = o[..., 1], o[..., 1] + TOE_BEND_UP
        forward_point = o + 10.0 * g["toe"][..., :3, 2]
        across = 10.0 * g["toe"][..., :3, 0]
        points = np.stack([forward_point, o + across, o - across])
        _clamp_heights(points, terrain, TOE_HEIGHT, low, high)
        forward_point, s0, s1 = points
        target_local = _rigid_inverse(g["heel"]) @ _ground_frame(forward_point - o, s0 - s1, o)
        return _mix_transforms(local["toe"], target_local, weight)
