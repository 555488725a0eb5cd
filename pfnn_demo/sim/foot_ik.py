"""Foot IK (original-demo.md: Foot IK) for N characters at once: lock feet in contact, keep them on the terrain,
align heels and toes.

Every quantity carries a leading (N, 2) axis pair: character, then leg (left, right). The maths
is the original's, step by step, as batched 4x4 transforms (column vectors: rotation in [:3, :3],
translation in [:3, 3]); a step the original skips for a leg (a heel already on its target, a
foot out of contact) is computed anyway and discarded with a mask. Departures, all undone by
`FootIK(original=True)`: a leg eases into full extension instead of snapping straight, a locked
foot keeps the roll it locked with, a lock is led along behind a network's foot that has walked
away from it, and the heel is turned so that its toe joint, not its forward axis, points at the
toe's target.
"""

from __future__ import annotations

import numpy as np

from .rotation import axis_angle_matrix, yaw_matrix, yaw_of
from .skeleton import LEFT_LEG, RIGHT_LEG
from .terrain import Heightmap
from .two_bone import SOFT_REACH, leg_turns

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
# Units (horizontal) a locked heel may trail the network's heel: further, the lock is drawn along
# behind it as on a leash. A network can hold a contact above its threshold while it carries the
# foot on (walking into a jump, contacts at 0.5-0.7 for 0.7 s while the foot moved 45 units):
# locked in place, the drawn foot trailed behind the leg and then caught up within a few frames
# of the lock's fade, its toe dragged over whatever lay between. Shorter leashes let feet slide
# that networks hold 12-40 units behind for long spells (docs/drawing.md, "A lock on a leash").
LOCK_REACH = 40.0
# Units (horizontal) from the network's hip to a lock within which the leash does not lead it,
# and from which it leads it fully (ramping up in between, so that a lock whose heel has long
# trailed by more than LOCK_REACH is not pulled in one frame). A network can splay or shuffle
# its feet under a still body while its contacts stay planted (a MANN standing after a stop:
# heels 35 units out from where they locked, the hips over the locks); those feet stay locked.
# Walking on from a held foot carries the hip further: 38-57 units from the lock as its heel
# passes LOCK_REACH (into a jump).
HIP_NEAR, HIP_REACH = 25.0, 35.0
HORIZONTAL = np.array([1.0, 0.0, 1.0])
HEEL_BEND = 4.0
TOE_BEND_UP = 10.0

ROLES = ("root", "hip", "knee", "heel", "toe")
# Joint of each role on each leg: (5 roles, 2 legs).
LEG_JOINTS = np.array([[LEFT_LEG[role], RIGHT_LEG[role]] for role in ROLES])
# Effector slots, as the original: 0 left heel, 1 right heel, 2 left toe, 3 right toe; here (N, 2 ends, 2 legs).
HEEL, TOE = 0, 1


def heel_across(global_pose: np.ndarray) -> np.ndarray:
    """Each leg's heel axis across the foot (its x axis), (..., 2, 3) from (..., joints, 4, 4)."""
    return global_pose[..., :3, 0][..., LEG_JOINTS[ROLES.index("heel")], :]


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross products of (..., 3) vectors (np.cross's axis handling costs more than the sums here)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _normalize(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _rigid_inverse(m: np.ndarray) -> np.ndarray:
    rotation = np.swapaxes(m[..., :3, :3], -1, -2)
    out = np.zeros_like(m)
    out[..., :3, :3] = rotation
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", rotation, m[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def _mix_transforms(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Slerp of the rotations (shortest arc), lerp of the translations (the original's mix_transforms,
    original-demo.md).

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
    (original-demo.md: Heel and toe orientation: columns (X, -U, Z) with U = normalize(S x Z), X = Z x U)."""
    z = _normalize(forward)
    up = _normalize(_cross(_normalize(across), z))
    x = _cross(z, up)
    out = np.zeros(forward.shape[:-1] + (4, 4))
    out[..., :3, 0], out[..., :3, 1], out[..., :3, 2], out[..., :3, 3] = x, -up, z, origin
    out[..., 3, 3] = 1.0
    return out


def _toe_yaw(offset: np.ndarray) -> np.ndarray:
    """Rotations (..., 3, 3) about the local y axis that bring a toe offset (..., 3) into the y-z
    plane, its forward (z) part positive: a frame turned by one has the toe straight ahead."""
    return yaw_matrix(-yaw_of(offset), np.float64)


def _clamp_heights(points: np.ndarray, terrain: Heightmap, lift: float, low: np.ndarray, high: np.ndarray) -> None:
    """Points (K, ..., 3) onto the terrain plus `lift`, kept within [low, high] (...) each."""
    ground = terrain.sample(points[..., 0], points[..., 2]) + lift
    points[..., 1] = np.minimum(np.maximum(ground, low), high)


class FootIK:
    """The IK state (locks, locked positions, smoothed ground heights) of N characters."""

    def __init__(self, count: int = 1, use_heel_contacts: bool = False, original: bool = False):
        # The original locks on toe contacts only; heel contacts can be added (max of heel and toe).
        # A foot locks while its contact is at least the threshold of its kind of contacts: the
        # original's on toe contacts, the labels' midpoint on heel and toe contacts (pfnn-demo's).
        self.use_heel_contacts = use_heel_contacts
        # Units over which a leg eases into full extension (two_bone.soft_reach); 0: the
        # original's hard limit, which snaps a knee straight as a target passes out of reach.
        self.soft_reach = 0.0 if original else SOFT_REACH
        # Whether a locked foot keeps its axis across (the original levels it on the network's own
        # axis every frame, which rolls a locked foot on rough ground as the network's foot turns).
        self.hold_roll = not original
        # Whether the heel is turned so that its toe joint, not its own forward axis, points at the
        # toe's target. A network's toe can turn under its heel's axis (the two come from different
        # outputs): aiming the axis, a locked foot's toe swept round its heel as the network twisted
        # the foot while standing (2-3 units/s after a strafe).
        self.aim_toe = not original
        # How far a locked heel may trail the network's (LOCK_REACH); the original's lock holds anywhere.
        self.lock_reach = np.inf if original else LOCK_REACH
        self.threshold = LABELLED_THRESHOLD if use_heel_contacts else THRESHOLD
        self.lock = np.zeros((count, 2, 2))          # (N, heel/toe, leg)
        self.position = np.zeros((count, 2, 2, 3))
        self.height = np.zeros((count, 2, 2))
        # Each leg's heel axis across the foot, held while it is locked (written when it locks).
        self.across = np.zeros((count, 2, 3))

    def reset(self, index, height) -> None:
        self.lock[index] = 0.0
        self.position[index] = 0.0
        self.across[index] = 0.0
        self.height[index] = np.asarray(height, np.float64)[..., None, None]

    def leg_contacts(self, contacts: np.ndarray) -> np.ndarray:
        """Per-leg contact weights (N, 2) from the network's (N, 4) (L heel, L toe, R heel, R toe);
        (2,) from one character's (4,)."""
        c = np.asarray(contacts, np.float64)
        if self.use_heel_contacts:
            return np.stack([np.maximum(c[..., 0], c[..., 1]), np.maximum(c[..., 2], c[..., 3])], axis=-1)
        return c[..., [1, 3]]

    def solve(self, global_pose: np.ndarray, contacts: np.ndarray, terrain: Heightmap,
              blend: np.ndarray | None = None) -> np.ndarray:
        """Global transforms (N, J, 4, 4) of the network's poses -> the same after IK. `blend` (N,)
        in [0, 1] (default 1) mixes each character's legs from the network's pose (0) to the solved
        one (1), so that IK switched on or off fades in or out; characters at blend 0 are not
        solved and keep their locks, the others are solved and have their locks updated."""
        count = len(global_pose)
        blend = np.ones(count) if blend is None else np.asarray(blend, np.float64)
        active = blend > 0
        contact = self.leg_contacts(contacts)                                   # (N, 2)
        g = {role: global_pose[:, LEG_JOINTS[r]].astype(np.float64) for r, role in enumerate(ROLES)}   # (N, 2, 4, 4)
        local = {child: _rigid_inverse(g[parent]) @ g[child]
                 for parent, child in zip(ROLES[:-1], ROLES[1:])}

        # 7.1 targets: the locked position where locked, never below the smoothed terrain.
        animated = np.stack([g["heel"][..., :3, 3], g["toe"][..., :3, 3]], axis=1)            # (N, 2, 2, 3)
        self._leash(animated, g["hip"][..., :3, 3], active)
        keys = animated + self.lock[..., None] * (self.position - animated)
        lift = np.array([HEEL_HEIGHT, TOE_HEIGHT])[None, :, None]
        ground = terrain.sample(keys[..., 0], keys[..., 2]).astype(np.float64)
        height = self.height + SMOOTHNESS * (ground + lift - self.height)
        keys[..., 1] = np.maximum(keys[..., 1], height)

        weight = np.clip(2.5 * contact, 0.0, 1.0)                               # (N, 2)
        self._two_joint(g, local, keys[:, HEEL])
        self._forward(g, local)
        touching = weight > 0
        # A locked foot keeps the axis across it that it had when it locked: the heel is levelled
        # on terrain sampled either side along that axis, and the network's foot turning under a
        # lock (gathering after a stop) swept those samples over rough ground, rolling the drawn
        # foot about its locked heel and moving its toe several units while standing.
        across = g["heel"][..., :3, 0]
        if self.hold_roll:
            across = _normalize(across + self.lock[:, HEEL, :, None] * (self.across - across))
        if np.any(touching):
            toe_offset = local["toe"][..., :3, 3] if self.aim_toe else None
            heel = self._orient_heel(g, local, keys[:, TOE], weight, terrain, across, toe_offset)
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
        self.across = np.where(engage[..., None], across, self.across)
        self.height = np.where(active[:, None, None], height, self.height)

        out = global_pose.copy()
        fading = active & (blend < 1)
        for r, role in enumerate(ROLES[1:], start=1):
            solved = g[role]
            if np.any(fading):
                mixed = _mix_transforms(global_pose[:, LEG_JOINTS[r]].astype(np.float64), solved,
                                        np.broadcast_to(blend[:, None], solved.shape[:2]))
                solved = np.where(fading[:, None, None, None], mixed, solved)
            out[:, LEG_JOINTS[r]] = np.where(active[:, None, None, None], solved.astype(np.float32),
                                             out[:, LEG_JOINTS[r]])
        return out

    def _leash(self, animated: np.ndarray, hip: np.ndarray, active: np.ndarray) -> None:
        """Move each lock (heel and toe together) horizontally towards the network's heel until
        the heel trails it by at most lock_reach, where the network's hip has walked away from
        the lock: not at all within HIP_NEAR, fully from HIP_REACH. Only `active` (N,) characters'
        locks move: the others keep theirs, as `solve` promises."""
        if np.isinf(self.lock_reach):
            return
        locked_heel = self.position[:, HEEL]                                                  # (N, 2, 3)
        trail = (locked_heel - animated[:, HEEL]) * HORIZONTAL
        distance = np.linalg.norm(trail, axis=-1, keepdims=True)
        away = np.linalg.norm((locked_heel - hip) * HORIZONTAL, axis=-1, keepdims=True)
        pull = np.clip((away - HIP_NEAR) / (HIP_REACH - HIP_NEAR), 0.0, 1.0) * active[:, None, None]
        excess = pull * np.maximum(distance - self.lock_reach, 0.0) / np.maximum(distance, 1e-9)
        self.position = self.position - (excess * trail)[:, None]

    @staticmethod
    def _forward(g: dict, local: dict) -> None:
        g["hip"] = g["root"] @ local["hip"]
        g["knee"] = g["hip"] @ local["knee"]
        g["heel"] = g["knee"] @ local["heel"]
        g["toe"] = g["heel"] @ local["toe"]

    def _two_joint(self, g: dict, local: dict, target: np.ndarray) -> None:
        """Bend hip and knee so the heel reaches `target` (N, 2, 3) (original-demo.md: The leg solve), with
        the shared
        two-bone solver (two_bone.py): its bend direction never flips. As in the original, a
        heel within EPSILON of its target is left where it is (solved for its own position)."""
        a, b, c = g["hip"][..., :3, 3], g["knee"][..., :3, 3], g["heel"][..., :3, 3]
        target = np.where((np.linalg.norm(c - target, axis=-1) >= EPSILON)[..., None], target, c)
        thigh_turn, shin_turn = leg_turns(a, b, c, target, g["knee"][..., :3, 2], EPSILON, self.soft_reach)
        hip_rotation = thigh_turn @ g["hip"][..., :3, :3]
        knee_rotation = shin_turn @ g["knee"][..., :3, :3]
        local["hip"], local["knee"] = local["hip"].copy(), local["knee"].copy()
        local["hip"][..., :3, :3] = np.swapaxes(g["root"][..., :3, :3], -1, -2) @ hip_rotation
        local["knee"][..., :3, :3] = np.swapaxes(hip_rotation, -1, -2) @ knee_rotation

    @staticmethod
    def _orient_heel(g: dict, local: dict, toe_key: np.ndarray, weight: np.ndarray, terrain: Heightmap,
                     across: np.ndarray, toe_offset: np.ndarray | None = None) -> np.ndarray:
        """Point the heel at the toe target, level across (`across`, unit (N, 2, 3)) with the terrain
        (original-demo.md: Heel and toe orientation). Given the toe's offset in the heel's frame
        (N, 2, 3), the heel is turned about its up axis so that the toe joint lies towards the
        target rather than the heel's forward axis."""
        h = g["heel"][..., :3, 3]
        across = 10.0 * across
        low, high = h[..., 1] - HEEL_BEND, h[..., 1] + HEEL_BEND
        sides = np.stack([h + across, h - across])
        _clamp_heights(sides, terrain, TOE_HEIGHT, low, high)
        s0, s1 = sides
        f = toe_key.copy()
        f[..., 1] = np.clip(f[..., 1], low, high)
        target = _ground_frame(f - h, s0 - s1, h)
        if toe_offset is not None:
            target[..., :3, :3] = target[..., :3, :3] @ _toe_yaw(toe_offset)
        target_local = _rigid_inverse(g["knee"]) @ target
        return _mix_transforms(local["heel"], target_local, weight)

    @staticmethod
    def _orient_toe(g: dict, local: dict, weight: np.ndarray, terrain: Heightmap) -> np.ndarray:
        """Lay the toe on the terrain (original-demo.md: Heel and toe orientation; the original's left-toe
        sample bug is fixed)."""
        o = g["toe"][..., :3, 3]
        low, high = o[..., 1], o[..., 1] + TOE_BEND_UP
        forward_point = o + 10.0 * g["toe"][..., :3, 2]
        across = 10.0 * g["toe"][..., :3, 0]
        points = np.stack([forward_point, o + across, o - across])
        _clamp_heights(points, terrain, TOE_HEIGHT, low, high)
        forward_point, s0, s1 = points
        target_local = _rigid_inverse(g["heel"]) @ _ground_frame(forward_point - o, s0 - s1, o)
        return _mix_transforms(local["toe"], target_local, weight)
