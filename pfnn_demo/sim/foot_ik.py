"""Foot IK (spec 7): lock feet in contact, keep them on the terrain, align heels and toes.

Per-frame small-matrix work on two legs of four joints each, so it is written with pyglm
(float32, the same maths library as the original demo) rather than with numpy, whose per-call
overhead would dominate 4x4 operations.
"""

from __future__ import annotations

import math

from pyglm import glm
import numpy as np

from .skeleton import LEFT_LEG, RIGHT_LEG
from .terrain import Heightmap

FADE = 0.075
THRESHOLD = 0.8
SMOOTHNESS = 0.5
HEEL_HEIGHT = 5.0
TOE_HEIGHT = 4.0
EPSILON = 1.0
HEEL_BEND = 4.0
TOE_BEND_UP = 10.0

LEGS = (LEFT_LEG, RIGHT_LEG)
# Effector slots, as the original: 0 left heel, 1 right heel, 2 left toe, 3 right toe.
HEEL_SLOTS, TOE_SLOTS = (0, 1), (2, 3)


def to_glm(matrix: np.ndarray) -> glm.mat4:
    return glm.mat4(*matrix.T.ravel().tolist())  # glm is column-major


def from_glm(matrix: glm.mat4) -> np.ndarray:
    return np.array(matrix.to_list(), np.float32).T


def _angle(u: glm.vec3, v: glm.vec3) -> float:
    return math.acos(min(max(glm.dot(glm.normalize(u), glm.normalize(v)), -1.0), 1.0))


def _safe_normalize(v: glm.vec3, fallback: glm.vec3) -> glm.vec3:
    length = glm.length(v)
    return v / length if length > 1e-6 else fallback


def _mix_transforms(a: glm.mat4, b: glm.mat4, t: float) -> glm.mat4:
    """Slerp of the rotations (shortest arc), lerp of the translations (spec 6.1 mix_transforms)."""
    rotation = glm.mat4_cast(glm.slerp(glm.quat_cast(glm.mat3(a)), glm.quat_cast(glm.mat3(b)), t))
    rotation[3] = glm.mix(a[3], b[3], t)
    return rotation


def _ground_frame(forward: glm.vec3, across: glm.vec3, origin: glm.vec3) -> glm.mat4:
    """The heel's or toe's target frame: z along `forward`, x across, y down, at `origin`
    (spec 7.3-7.4: columns (X, -U, Z) with U = normalize(S x Z), X = Z x U)."""
    z = glm.normalize(forward)
    up = glm.normalize(glm.cross(glm.normalize(across), z))
    x = glm.cross(z, up)
    return glm.mat4(glm.vec4(x, 0), glm.vec4(-up, 0), glm.vec4(z, 0), glm.vec4(origin, 1))


class FootIK:
    def __init__(self, use_heel_contacts: bool = False):
        # The original locks on toe contacts only; heel contacts can be added (max of heel and toe).
        self.use_heel_contacts = use_heel_contacts
        self.reset(0.0)

    def reset(self, height: float) -> None:
        self.lock = [0.0] * 4
        self.position = [glm.vec3(0)] * 4
        self.height = [float(height)] * 4

    def leg_contacts(self, contacts: np.ndarray) -> tuple[float, float]:
        """Per-leg contact weight from the network's (L heel, L toe, R heel, R toe)."""
        c = [float(v) for v in contacts]
        if self.use_heel_contacts:
            return max(c[0], c[1]), max(c[2], c[3])
        return c[1], c[3]

    def solve(self, global_pose: np.ndarray, contacts: np.ndarray, terrain: Heightmap) -> np.ndarray:
        """Global transforms (J, 4, 4) of the network's pose -> the same after IK."""
        height_at = terrain.height_at
        contact = self.leg_contacts(contacts)
        chains = []
        for leg in LEGS:
            g = {role: to_glm(global_pose[leg[role]]) for role in ("root", "hip", "knee", "heel", "toe")}
            local = {"hip": glm.inverse(g["root"]) * g["hip"], "knee": glm.inverse(g["hip"]) * g["knee"],
                     "heel": glm.inverse(g["knee"]) * g["heel"], "toe": glm.inverse(g["heel"]) * g["toe"]}
            chains.append((g, local))

        # 7.1 targets: the locked position where locked, never below the smoothed terrain.
        keys = []
        for slot, (leg, role, lift) in enumerate(((0, "heel", HEEL_HEIGHT), (1, "heel", HEEL_HEIGHT),
                                                  (0, "toe", TOE_HEIGHT), (1, "toe", TOE_HEIGHT))):
            key = glm.mix(glm.vec3(chains[leg][0][role][3]), self.position[slot], self.lock[slot])
            self.height[slot] += SMOOTHNESS * (height_at(key.x, key.z) + lift - self.height[slot])
            key.y = max(key.y, self.height[slot])
            keys.append(key)

        for leg, (g, local) in enumerate(chains):
            weight = min(max(2.5 * contact[leg], 0.0), 1.0)
            self._two_joint(g, local, keys[HEEL_SLOTS[leg]])
            self._forward(g, local)
            if weight > 0:
                self._orient_heel(g, local, keys[TOE_SLOTS[leg]], weight, height_at)
                self._forward(g, local)
                self._orient_toe(g, local, weight, height_at)
                self._forward(g, local)

        # 7.5 locks: engage on contact, fade out after it.
        for leg, (g, _) in enumerate(chains):
            heel, toe = HEEL_SLOTS[leg], TOE_SLOTS[leg]
            if self.lock[heel] == 0 and contact[leg] >= THRESHOLD:
                self.lock[heel] = self.lock[toe] = 1.0
                self.position[heel] = glm.vec3(g["heel"][3])
                self.position[toe] = glm.vec3(g["toe"][3])
            elif self.lock[heel] > 0 and contact[leg] < THRESHOLD:
                self.lock[heel] = min(max(self.lock[heel] - FADE, 0.0), 1.0)
                self.lock[toe] = min(max(self.lock[toe] - FADE, 0.0), 1.0)

        out = global_pose.copy()
        for leg, (g, _) in zip(LEGS, chains):
            for role in ("hip", "knee", "heel", "toe"):
                out[leg[role]] = from_glm(g[role])
        return out

    @staticmethod
    def _forward(g: dict, local: dict) -> None:
        g["hip"] = g["root"] * local["hip"]
        g["knee"] = g["hip"] * local["knee"]
        g["heel"] = g["knee"] * local["heel"]
        g["toe"] = g["heel"] * local["toe"]

    @staticmethod
    def _two_joint(g: dict, local: dict, target: glm.vec3) -> None:
        """Bend hip and knee so the heel reaches `target` (spec 7.2)."""
        a, b, c = glm.vec3(g["hip"][3]), glm.vec3(g["knee"][3]), glm.vec3(g["heel"][3])
        if glm.length(c - target) < EPSILON:
            return
        lc, la = glm.length(b - a), glm.length(b - c)
        lt = min(max(glm.length(target - a), EPSILON), lc + la - EPSILON)
        alpha0 = _angle(c - a, b - a)
        beta0 = _angle(a - b, c - b)
        gamma = _angle(c - a, target - a)
        alpha1 = math.acos(min(max((la * la - lc * lc - lt * lt) / (-2 * lc * lt), -1.0), 1.0))
        beta1 = math.acos(min(max((lt * lt - lc * lc - la * la) / (-2 * lc * la), -1.0), 1.0))
        # A straight leg has no bending plane: bend about the hip's own x axis then.
        hip_x = glm.vec3(g["hip"][0])
        n0 = _safe_normalize(glm.cross(b - a, c - a), hip_x)
        n1 = _safe_normalize(glm.cross(target - a, c - a), hip_x)
        r0 = glm.rotate(alpha1 - alpha0, -n0)
        r1 = glm.rotate(beta1 - beta0, -n0)
        r2 = glm.rotate(gamma, -n1)
        hip_rotation = glm.mat4(glm.mat3(g["hip"]))
        knee_rotation = glm.mat4(glm.mat3(g["knee"]))
        new_hip = glm.mat3(glm.inverse(glm.mat4(glm.mat3(g["root"]))) * r2 * r0 * hip_rotation)
        new_knee = glm.mat3(glm.inverse(hip_rotation) * r1 * knee_rotation)
        for role, rotation in (("hip", new_hip), ("knee", new_knee)):
            transform = glm.mat4(rotation)
            transform[3] = local[role][3]   # keep the translation
            local[role] = transform

    @staticmethod
    def _orient_heel(g: dict, local: dict, toe_key: glm.vec3, weight: float, height_at) -> None:
        """Point the heel at the toe target, level across with the terrain (spec 7.3)."""
        h = glm.vec3(g["heel"][3])
        across = 10.0 * glm.vec3(g["heel"][0])
        s0, s1 = h + across, h - across
        s0.y = min(max(height_at(s0.x, s0.z) + TOE_HEIGHT, h.y - HEEL_BEND), h.y + HEEL_BEND)
        s1.y = min(max(height_at(s1.x, s1.z) + TOE_HEIGHT, h.y - HEEL_BEND), h.y + HEEL_BEND)
        f = glm.vec3(toe_key)
        f.y = min(max(f.y, h.y - HEEL_BEND), h.y + HEEL_BEND)
        target_local = glm.inverse(g["knee"]) * _ground_frame(f - h, s0 - s1, h)
        local["heel"] = _mix_transforms(local["heel"], target_local, weight)

    @staticmethod
    def _orient_toe(g: dict, local: dict, weight: float, height_at) -> None:
        """Lay the toe on the terrain (spec 7.4; the original's left-toe sample bug is fixed)."""
        o = glm.vec3(g["toe"][3])
        forward_point = o + 10.0 * glm.vec3(g["toe"][2])
        across = 10.0 * glm.vec3(g["toe"][0])
        s0, s1 = o + across, o - across
        for point in (forward_point, s0, s1):
            point.y = min(max(height_at(point.x, point.z) + TOE_HEIGHT, o.y), o.y + TOE_BEND_UP)
        target_local = glm.inverse(g["heel"]) * _ground_frame(forward_point - o, s0 - s1, o)
        local["toe"] = _mix_transforms(local["toe"], target_local, weight)
