"""Foot IK (spec 7): lock feet in contact, keep them on the terrain, align heels and toes.

Both legs are solved at once: every quantity below has a leading axis of 2 (left, right).
The pose is a set of local 4x4 transforms; the solver edits the local rotations of hip, knee,
heel and toe and returns the new global transforms.
"""

from __future__ import annotations

import numpy as np

from .rotation import axis_angle_matrix, matrix_to_quat, normalize, quat_slerp, quat_to_matrix
from .skeleton import LEFT_LEG, RIGHT_LEG, forward_kinematics
from .terrain import Heightmap

FADE = 0.075
THRESHOLD = 0.8
SMOOTHNESS = 0.5
HEEL_HEIGHT = 5.0
TOE_HEIGHT = 4.0
EPSILON = 1.0
HEEL_BEND = 4.0
TOE_BEND_UP = 10.0

_LEGS = {role: np.array([LEFT_LEG[role], RIGHT_LEG[role]]) for role in LEFT_LEG}
# Effector slots: 0, 1 = left/right heel, 2, 3 = left/right toe (the original's HL, HR, TL, TR).
_EFFECTOR_JOINTS = np.concatenate([_LEGS["heel"], _LEGS["toe"]])
_EFFECTOR_LIFT = np.array([HEEL_HEIGHT, HEEL_HEIGHT, TOE_HEIGHT, TOE_HEIGHT], np.float32)


def _angle(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    cosine = np.sum(normalize(u) * normalize(v), axis=-1)
    return np.arccos(np.clip(cosine, -1.0, 1.0))


def _terrain_y(terrain: Heightmap, points: np.ndarray) -> np.ndarray:
    return np.asarray(terrain.sample(points[..., 0], points[..., 2]), np.float64)


def _blend_local(current: np.ndarray, target: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """mix_transforms: slerp the rotations, lerp the translations (per leg)."""
    out = current.copy()
    q = quat_slerp(matrix_to_quat(current[:, :3, :3]), matrix_to_quat(target[:, :3, :3]), weight)
    out[:, :3, :3] = quat_to_matrix(q)
    out[:, :3, 3] = current[:, :3, 3] + weight[:, None] * (target[:, :3, 3] - current[:, :3, 3])
    return out


def _frame(columns: tuple[np.ndarray, np.ndarray, np.ndarray], origin: np.ndarray) -> np.ndarray:
    transform = np.zeros((len(origin), 4, 4))
    transform[:, :3, 0], transform[:, :3, 1], transform[:, :3, 2] = columns
    transform[:, :3, 3] = origin
    transform[:, 3, 3] = 1.0
    return transform


class FootIK:
    def __init__(self, use_heel_contacts: bool = False):
        # The original locks on toe contacts only; heel contacts can be added (max of heel and toe).
        self.use_heel_contacts = use_heel_contacts
        self.reset(0.0)

    def reset(self, height: float) -> None:
        self.lock = np.zeros(4)
        self.position = np.zeros((4, 3))
        self.height = np.full(4, float(height))

    def leg_contacts(self, contacts: np.ndarray) -> np.ndarray:
        """Per-leg contact weight from the network's (L heel, L toe, R heel, R toe)."""
        toes = np.array([contacts[1], contacts[3]], np.float64)
        if self.use_heel_contacts:
            return np.maximum(toes, [contacts[0], contacts[2]])
        return toes

    def solve(self, local: np.ndarray, contacts: np.ndarray, terrain: Heightmap) -> np.ndarray:
        """Edit `local` (J, 4, 4) in place; return the global transforms after IK."""
        local64 = local.astype(np.float64)
        global_ = forward_kinematics(local64)
        contact = self.leg_contacts(contacts)

        # 7.1 targets: locked position where locked, never below the (smoothed) terrain.
        keys = global_[_EFFECTOR_JOINTS, :3, 3]
        keys = keys + self.lock[:, None] * (self.position - keys)
        self.height += SMOOTHNESS * (_terrain_y(terrain, keys) + _EFFECTOR_LIFT - self.height)
        keys[:, 1] = np.maximum(keys[:, 1], self.height)
        heel_keys, toe_keys = keys[:2], keys[2:]

        # 7.2 two-joint solve, hip and knee.
        a = global_[_LEGS["hip"], :3, 3]
        b = global_[_LEGS["knee"], :3, 3]
        c = global_[_LEGS["heel"], :3, 3]
        t = heel_keys
        hip_rotation = global_[_LEGS["hip"], :3, :3]
        knee_rotation = global_[_LEGS["knee"], :3, :3]
        root_rotation = global_[_LEGS["root"], :3, :3]
        lc = np.linalg.norm(b - a, axis=1)
        la = np.linalg.norm(b - c, axis=1)
        lt = np.clip(np.linalg.norm(t - a, axis=1), EPSILON, lc + la - EPSILON)
        active = np.linalg.norm(c - t, axis=1) >= EPSILON
        if np.any(active):
            alpha0 = _angle(c - a, b - a)
            beta0 = _angle(a - b, c - b)
            gamma = _angle(c - a, t - a)
            alpha1 = np.arccos(np.clip((la ** 2 - lc ** 2 - lt ** 2) / (-2 * lc * lt), -1, 1))
            beta1 = np.arccos(np.clip((lt ** 2 - lc ** 2 - la ** 2) / (-2 * lc * la), -1, 1))
            # A straight leg has no bending plane: bend about the hip's own x axis then.
            hip_x = hip_rotation[:, :, 0]
            n0 = normalize(np.cross(b - a, c - a), hip_x)
            n1 = normalize(np.cross(t - a, c - a), hip_x)
            r0 = axis_angle_matrix(-n0, alpha1 - alpha0)
            r1 = axis_angle_matrix(-n0, beta1 - beta0)
            r2 = axis_angle_matrix(-n1, gamma)
            hip_local = np.swapaxes(root_rotation, 1, 2) @ (r2 @ r0 @ hip_rotation)
            knee_local = np.swapaxes(hip_rotation, 1, 2) @ (r1 @ knee_rotation)
            for leg in np.flatnonzero(active):
                local64[_LEGS["hip"][leg], :3, :3] = hip_local[leg]
                local64[_LEGS["knee"][leg], :3, :3] = knee_local[leg]
            global_ = forward_kinematics(local64)

        weight = np.clip(2.5 * contact, 0, 1)

        # 7.3 heel orientation: point at the toe target, level across with the terrain.
        heel = global_[_LEGS["heel"]]
        h = heel[:, :3, 3]
        across = 10 * heel[:, :3, 0]
        s0, s1 = h + across, h - across
        s0[:, 1] = np.clip(_terrain_y(terrain, s0) + TOE_HEIGHT, h[:, 1] - HEEL_BEND, h[:, 1] + HEEL_BEND)
        s1[:, 1] = np.clip(_terrain_y(terrain, s1) + TOE_HEIGHT, h[:, 1] - HEEL_BEND, h[:, 1] + HEEL_BEND)
        f = toe_keys.copy()
        f[:, 1] = np.clip(f[:, 1], h[:, 1] - HEEL_BEND, h[:, 1] + HEEL_BEND)
        z = normalize(f - h)
        side = normalize(s0 - s1)
        up = normalize(np.cross(side, z))
        x = np.cross(z, up)
        target = _frame((x, -up, z), h)
        knee_global = global_[_LEGS["knee"]]
        target_local = np.linalg.inv(knee_global) @ target
        local64[_LEGS["heel"]] = _blend_local(local64[_LEGS["heel"]], target_local, weight)
        global_ = forward_kinematics(local64)

        # 7.4 toe orientation (the original samples the left toe's side point at the wrong x).
        toe = global_[_LEGS["toe"]]
        o = toe[:, :3, 3]
        forward_point = o + 10 * toe[:, :3, 2]
        s0, s1 = o + 10 * toe[:, :3, 0], o - 10 * toe[:, :3, 0]
        for point in (forward_point, s0, s1):
            point[:, 1] = np.clip(_terrain_y(terrain, point) + TOE_HEIGHT, o[:, 1], o[:, 1] + TOE_BEND_UP)
        side = normalize(s0 - s1)
        forward = normalize(forward_point - o)
        up = normalize(np.cross(side, forward))
        side = np.cross(forward, up)
        target = _frame((side, -up, forward), o)
        target_local = np.linalg.inv(global_[_LEGS["heel"]]) @ target
        local64[_LEGS["toe"]] = _blend_local(local64[_LEGS["toe"]], target_local, weight)
        global_ = forward_kinematics(local64)

        # 7.5 locks: engage on contact, fade out after it.
        for leg in range(2):
            heel_slot, toe_slot = leg, leg + 2
            if self.lock[heel_slot] == 0 and contact[leg] >= THRESHOLD:
                self.lock[[heel_slot, toe_slot]] = 1.0
                self.position[heel_slot] = global_[_LEGS["heel"][leg], :3, 3]
                self.position[toe_slot] = global_[_LEGS["toe"][leg], :3, 3]
            elif self.lock[heel_slot] > 0 and contact[leg] < THRESHOLD:
                self.lock[[heel_slot, toe_slot]] = np.clip(self.lock[[heel_slot, toe_slot]] - FADE, 0, 1)

        local[:] = local64
        return global_.astype(np.float32)
