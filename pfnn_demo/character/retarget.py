"""Drive a rig from canonical poses by LookRotation retargeting, batched over characters.

For each driven joint a frame (a LookRotation: z towards one direction, y as close as it can
be to a second) is built from the canonical pose: the bone towards its child with the body's
forward for the trunk, the limb's plane for arms and legs. The same rule applied once to the
rig's bind pose gives the frame the joint had there, so the joint's world rotation is

    R_rig(t) = L_canonical(t) . L_rig(bind)^T . R_rig(bind)

and no joint's own local axes matter. Ends without a child bone in the canonical skeleton (head,
hands, feet) turn with the canonical joint's rotation from its rest pose instead. Unmapped
joints keep their bind-local transform. The rig is drawn at the canonical skeleton's leg length
(an export scales it back to its own size): its root goes where the canonical root goes, its
thighs stand as high above the ground as the canonical thighs, and a two-bone solve puts each
foot where the canonical foot is. Headless: NumPy only (docs/characters.md).
"""

from __future__ import annotations

import numpy as np

from ..sim.skeleton import JOINT_NAMES, PARENTS, rest_pose_globals
from ..sim.foot_ik import HEEL_HEIGHT
from ..sim.two_bone import leg_turns
from .joint_map import JointMap
from .rig import Rig

_INDEX = {name: i for i, name in enumerate(JOINT_NAMES)}
HINGE_LEAN = 0.2       # how much of the body's hinge axis steadies a limb's own plane as it straightens
FOOT_SLACK = 0.01      # units short of a target out of the rig leg's reach

# Bones of the trunk: joint -> the landmarks its z axis runs to (the first one the rig has).
TRUNK = {"Spine": ("Spine1", "Neck1", "Head"), "Spine1": ("Neck1", "Head"), "Neck1": ("Head",)}
LIMBS = [(side, upper, lower, end, kind)
         for side in ("Left", "Right")
         for upper, lower, end, kind in (("UpLeg", "Leg", "Foot", "leg"), ("Arm", "ForeArm", "Hand", "arm"))]
ENDS = ("Head", "LeftHand", "RightHand", "LeftFoot", "RightFoot")   # turned by the canonical rotation


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.sqrt(np.sum(v * v, axis=-1, keepdims=True)), 1e-9)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.cross of (..., 3) arrays without its axis bookkeeping (a tenth of the time on small arrays)."""
    a, b = np.broadcast_arrays(a, b)
    out = np.empty(a.shape, np.result_type(a, b))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _leg_length(landmarks: np.ndarray) -> float:
    """The mean thigh plus shin length of the legs of (31, 3) canonical landmarks."""
    return float(np.mean([np.linalg.norm(landmarks[_INDEX[s + "Leg"]] - landmarks[_INDEX[s + "UpLeg"]])
                          + np.linalg.norm(landmarks[_INDEX[s + "Foot"]] - landmarks[_INDEX[s + "Leg"]])
                          for s in ("Left", "Right")]))


def _apply(rotations: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    return (rotations @ vectors[..., None])[..., 0]


def look_rotation(z: np.ndarray, y_hint: np.ndarray) -> np.ndarray:
    """Rotations (..., 3, 3) whose z column points along `z` and y column as close to `y_hint`."""
    z = _unit(z)
    x = _unit(_cross(y_hint, z))
    return np.stack([x, _cross(z, x), z], axis=-1)


class _Body:
    """The directions the rules read, from landmark positions (..., 31, 3) named as the canonical
    joints (the rig's bind pose fills the slots of the joints it has)."""

    def __init__(self, points: np.ndarray):
        self.points = points
        hips = 0.5 * (points[..., _INDEX["LeftUpLeg"], :] + points[..., _INDEX["RightUpLeg"], :])
        shoulders = 0.5 * (points[..., _INDEX["LeftArm"], :] + points[..., _INDEX["RightArm"], :])
        self.up = _unit(shoulders - hips)
        self.pelvis_forward = _unit(_cross(points[..., _INDEX["LeftUpLeg"], :] - points[..., _INDEX["RightUpLeg"], :],
                                             self.up))
        self.chest_forward = _unit(_cross(points[..., _INDEX["LeftArm"], :] - points[..., _INDEX["RightArm"], :],
                                            self.up))

    def at(self, name: str) -> np.ndarray:
        return self.points[..., _INDEX[name], :]


class Retargeter:
    """Poses of `rig` (world 4x4 transforms, demo units) from canonical poses."""

    def __init__(self, rig: Rig, joint_map: JointMap):
        joint_map.check()
        self.rig, self.map = rig, joint_map
        # The rig is drawn at the canonical skeleton's leg length, so that its feet can stand where
        # the canonical feet stand without sliding; `scale` is that factor.
        bind_world = rig.bind_world()
        landmarks = self._landmarks(bind_world[:, :3, 3])
        self.scale = _leg_length(rest_pose_globals().astype(np.float64)) / _leg_length(landmarks)
        landmarks *= self.scale
        self.bind_world = np.diag([self.scale] * 3 + [1.0]) @ bind_world
        self.bind_linear = self.bind_world[:, :3, :3]
        self.bind_positions = self.bind_world[:, :3, 3].copy()
        has = set(joint_map.joints)
        self.trunk = {joint: next(t for t in targets if t in has)
                      for joint, targets in TRUNK.items() if joint in has and any(t in has for t in targets)}
        self.shoulders = [side + "Shoulder" for side in ("Left", "Right") if side + "Shoulder" in has]
        self.ends = [name for name in ENDS if name in has]

        # The driven joints, in the order of their turns: hips, trunk, shoulders, limbs, ends.
        limbs = [side + part for side, upper, lower, _, _ in LIMBS for part in (upper, lower)]
        driven_names = [n for n in ["Hips", *self.trunk, *self.shoulders, *limbs, *self.ends] if n in has]
        self.driven = np.array([joint_map[name] for name in driven_names], np.intp)
        self.driven_names = driven_names
        self._bone_rules(driven_names)
        bind_frames = np.empty((len(driven_names), 3, 3))
        bind_frames[self.bone_rows] = self._bone_frames(landmarks[None])[0][0]
        end_rows = [driven_names.index(name) for name in self.ends]
        self.end_rows = np.array(end_rows, np.intp)
        bind_frames[self.end_rows] = self._end_frames(landmarks)
        self.bind_frames_t = np.swapaxes(bind_frames, -1, -2)
        # Ends: the canonical rest frame by the same rule, so that R(t) L_rest L_bind^T turns them.
        self.end_canonical = np.array([_INDEX[name] for name in self.ends], np.intp)
        self.end_offsets = self._end_frames(rest_pose_globals().astype(np.float64)) @ self.bind_frames_t[self.end_rows]

        hips = joint_map["Hips"]
        self.hips = hips
        self.above_hips = np.array([j for j in range(rig.count) if rig.is_ancestor(j, hips) and j != hips], np.intp)
        # The ankles' height above the soles in the bind pose (the lowest vertex): the rig's
        # heel height, where the canonical skeleton's is HEEL_HEIGHT.
        vertices = [p.positions[:, 1] for p in rig.primitives]
        feet = [joint_map[s + "Foot"] for s in ("Left", "Right")]
        sole = self.scale * min(float(np.min(v)) for v in vertices) if vertices else float(self.bind_positions[feet, 1].min())
        self.ankle_height = float(self.bind_positions[feet, 1].mean()) - sole
        # Joints whose rig parent is not the joint their canonical parent maps to (feet hung from
        # the root): carried by that joint instead, at their bind offset from it.
        self.carried, self.carriers = [], []
        for name, joint in joint_map.joints.items():
            carrier = self._mapped_ancestor(name)
            if carrier is not None and not rig.is_ancestor(carrier, joint):
                self.carried.append(joint)
                self.carriers.append(carrier)
        self.carried = np.array(self.carried, np.intp)
        self.carriers = np.array(self.carriers, np.intp)
        self.hips_row = driven_names.index("Hips")
        for name in ("bind_world", "bind_positions", "bind_linear", "bind_frames_t", "end_offsets"):   # float32 per frame
            setattr(self, name, np.ascontiguousarray(getattr(self, name), np.float32))
        self._plan()
        # Per leg: rig thigh, knee and ankle joints, and the rows of the thigh's and knee's turns.
        self.leg_rows = np.array([[joint_map[side + "UpLeg"], joint_map[side + "Leg"], joint_map[side + "Foot"],
                                   driven_names.index(side + "UpLeg"), driven_names.index(side + "Leg")]
                                  for side in ("Left", "Right")], np.intp)

    # -- setup ----------------------------------------------------------------------------------

    def _mapped_ancestor(self, name: str) -> int | None:
        parent = PARENTS[_INDEX[name]]
        while parent >= 0:
            if JOINT_NAMES[parent] in self.map:
                return self.map[JOINT_NAMES[parent]]
            parent = PARENTS[parent]
        return None

    def _landmarks(self, positions: np.ndarray) -> np.ndarray:
        """(31, 3) the rig's joint `positions` in the slots of the canonical joints they play (NaN
        where none does); a rig without hands gets its wrists where its palms start."""
        landmarks = np.full((len(JOINT_NAMES), 3), np.nan)
        for name, joint in self.map.joints.items():
            landmarks[_INDEX[name]] = positions[joint]
        for side in ("Left", "Right"):
            if side + "Hand" not in self.map:
                forearm = self.map[side + "ForeArm"]
                children = self.rig.children(forearm)
                landmarks[_INDEX[side + "Hand"]] = (positions[children].mean(axis=0) if len(children) else
                                                    2 * positions[forearm] - positions[self.map[side + "Arm"]])
        return landmarks

    def _bone_rules(self, names: list[str]) -> None:
        """The frames' rules for the joints that are not ends, as index arrays, so that each
        frame builds them all in one vectorised pass (`_bone_frames`). z runs from one landmark
        to another (the hips': the pelvis's forward); y leans to a hint: 0 the pelvis's forward
        (hips' y: 2, the trunk's up; the spine), 1 the chest's (chest, neck, shoulders), 3 + k the
        hinge axis of LIMBS[k] (its plane where it bends, the body's where it is straight: a knee
        bends backwards about the body's left, an elbow forwards about its right)."""
        rows, starts, ends, hints = [], [], [], []
        limbs = {}
        for k, (side, upper, lower, end, kind) in enumerate(LIMBS):
            limbs[side + upper] = (side + lower, 3 + k)
            limbs[side + lower] = (side + end, 3 + k)
        for row, name in enumerate(names):
            if name in self.ends:
                continue
            if name == "Hips":
                start, end, hint = -1, 0, 2                   # z: the pelvis's forward
            elif name in self.trunk:
                start, end, hint = _INDEX[name], _INDEX[self.trunk[name]], 0 if name == "Spine" else 1
            elif name.endswith("Shoulder"):
                start, end, hint = _INDEX[name], _INDEX[name.replace("Shoulder", "Arm")], 1
            else:
                target, hint = limbs[name]
                start, end = _INDEX[name], _INDEX[target]
            rows.append(row)
            starts.append(start)
            ends.append(end)
            hints.append(hint)
        self.bone_rows = np.array(rows, np.intp)
        self.bone_starts, self.bone_ends = np.array(starts, np.intp), np.array(ends, np.intp)
        self.bone_hints = np.array(hints, np.intp)
        self.limb_joints = np.array([[_INDEX[side + upper], _INDEX[side + lower], _INDEX[side + end]]
                                     for side, upper, lower, end, _ in LIMBS], np.intp)
        self.limb_signs = np.array([-1.0 if kind == "leg" else 1.0 for *_, kind in LIMBS], np.float32)[:, None]
        self.limb_chest = np.array([kind == "arm" for *_, kind in LIMBS])[:, None]

    def _bone_frames(self, points: np.ndarray) -> tuple[np.ndarray, _Body]:
        """Frames (K, B, 3, 3) of the joints that are not ends, from landmarks (K, 31, 3)."""
        body = _Body(points)
        a, b, c = (points[:, self.limb_joints[:, i]] for i in range(3))
        upper, lower = b - a, c - b
        forward = np.where(self.limb_chest, body.chest_forward[:, None], body.pelvis_forward[:, None])
        body_axis = self.limb_signs * _unit(_cross(_unit(lower), forward))
        hinge = _cross(upper, lower) / np.maximum(np.sqrt(np.sum(upper * upper, -1, keepdims=True)
                                                          * np.sum(lower * lower, -1, keepdims=True)), 1e-9)
        candidates = np.concatenate([body.pelvis_forward[:, None], body.chest_forward[:, None], body.up[:, None],
                                     hinge + HINGE_LEAN * body_axis], axis=1)
        z = points[:, self.bone_ends] - points[:, np.maximum(self.bone_starts, 0)]
        z[:, self.bone_starts < 0] = body.pelvis_forward[:, None]
        return look_rotation(z, candidates[:, self.bone_hints]), body

    def _end_frames(self, points: np.ndarray) -> np.ndarray:
        """Frames (E, 3, 3) of the ends (head, hands, feet) in a rest or bind pose, landmarks (31, 3):
        the head up its neck facing the chest's forward, a hand along its forearm with its palm
        down, a foot level and forwards."""
        body = _Body(points)
        frames = []
        for name in self.ends:
            if name == "Head":
                neck = "Neck1" if "Neck1" in self.map else "Spine1"
                frames.append(look_rotation(body.at("Head") - body.at(neck), body.chest_forward))
            elif name.endswith("Hand"):
                side = name[:-4]
                wrist_way = body.at(name) - body.at(side + "ForeArm")
                palm = (1.0 if side == "Left" else -1.0) * _cross(wrist_way, body.chest_forward)
                frames.append(look_rotation(wrist_way, palm))
            else:
                forward = body.pelvis_forward * [1.0, 0.0, 1.0]
                frames.append(look_rotation(forward, np.array([0.0, 1.0, 0.0])))
        return np.array(frames).reshape(-1, 3, 3)

    # -- per frame ------------------------------------------------------------------------------

    def __call__(self, canonical: np.ndarray, ground=None) -> np.ndarray:
        """World transforms (K, J, 4, 4) of the rig from canonical world transforms (K, 31, 4, 4)
        (demo units). `ground(x, z)`: terrain heights (a heightmap's `sample`), flat 0 if None."""
        canonical = np.asarray(canonical, np.float32)
        single = canonical.ndim == 3
        canonical = canonical[None] if single else canonical
        positions = canonical[..., :3, 3]
        ground = ground or (lambda x, z: np.zeros_like(x))

        frames, body = self._bone_frames(positions)
        turns = np.empty((len(positions), len(self.driven), 3, 3), np.float32)     # (K, D, 3, 3)
        turns[:, self.bone_rows] = frames @ self.bind_frames_t[self.bone_rows]
        turns[:, self.end_rows] = canonical[:, self.end_canonical, :3, :3] @ self.end_offsets
        hips = positions[:, 0]
        # The legs hang rigidly from the hips, thighs and shins (the joints between them follow
        # their parents): their joints follow from the turns without the whole rig's kinematics.
        bind = self.bind_positions
        rows = self.leg_rows
        hips_turn = turns[:, self.hips_row]
        thighs = hips[:, None] + _apply(hips_turn[:, None], bind[rows[:, 0]] - bind[self.hips])      # (K, 2, 3)
        knees = thighs + _apply(turns[:, rows[:, 3]], bind[rows[:, 1]] - bind[rows[:, 0]])
        ankles = knees + _apply(turns[:, rows[:, 4]], bind[rows[:, 2]] - bind[rows[:, 1]])
        # Up or down so that the rig's thighs stand as high above the ground as the canonical
        # thighs: the legs then bend as the canonical legs do.
        canonical_thighs = positions[:, [_INDEX["LeftUpLeg"], _INDEX["RightUpLeg"]]]
        canonical_feet = positions[:, [_INDEX["LeftFoot"], _INDEX["RightFoot"]]]
        lift = np.mean(self.ankle_height - HEEL_HEIGHT + canonical_thighs[..., 1] - thighs[..., 1], axis=1)
        hips_target = hips + lift[:, None] * np.array([0.0, 1.0, 0.0], np.float32)
        thighs[..., 1] += lift[:, None]
        knees[..., 1] += lift[:, None]
        ankles[..., 1] += lift[:, None]
        # Feet where the canonical feet are, moved by the rig's thigh's offset from the canonical
        # thigh, at the canonical foot's height above the ground (from the rig's own heel height).
        targets = canonical_feet + thighs - canonical_thighs
        foot_ground = ground(canonical_feet[..., 0], canonical_feet[..., 2])
        targets[..., 1] = ground(targets[..., 0], targets[..., 2]) + self.ankle_height - HEEL_HEIGHT + (
            canonical_feet[..., 1] - foot_ground)
        thigh_turn, shin_turn = leg_turns(thighs, knees, ankles, targets, body.pelvis_forward[:, None], FOOT_SLACK, 0.0)
        turns[:, rows[:, 3]] = thigh_turn @ turns[:, rows[:, 3]]
        turns[:, rows[:, 4]] = shin_turn @ turns[:, rows[:, 4]]
        world = self._pose(turns, hips_target)
        return (world[0] if single else world).astype(np.float32)

    def _plan(self) -> None:
        """What `_pose` needs, as index arrays: each joint's anchor (the turned joint it moves
        rigidly with: its nearest driven ancestor, the hips for the joints above them, the carrier
        for a carried joint), its bind transform relative to that anchor, and the driven joints in
        groups that depend only on groups before them."""
        rig = self.rig
        driven = set(self.driven.tolist())
        carrier = dict(zip(self.carried.tolist(), self.carriers.tolist()))
        above = set(self.above_hips.tolist())
        anchor = np.full(rig.count, self.hips)
        for joint in range(rig.count):
            if joint == self.hips or joint in above:
                continue
            if joint in carrier:
                anchor[joint] = carrier[joint]
                continue
            parent = int(rig.parents[joint])
            while parent >= 0 and parent not in driven and parent not in above:
                parent = int(rig.parents[parent])
            anchor[joint] = parent if parent >= 0 else self.hips
        depth = {self.hips: 0, **{j: 0 for j in above}}

        def depth_of(joint):
            if joint not in depth:
                depth[joint] = depth_of(int(anchor[joint])) + 1
            return depth[joint]

        for joint in driven:
            depth_of(joint)
        row = {j: i for i, j in enumerate(self.driven.tolist())}
        groups = {}
        for joint in driven - {self.hips}:
            groups.setdefault(depth[joint], []).append(joint)
        self.driven_groups = [(np.array(groups[d], np.intp), np.array([row[j] for j in groups[d]], np.intp))
                              for d in sorted(groups)]
        self.kept = np.array([j for j in range(rig.count) if j not in driven and j not in above], np.intp)
        self.anchor = anchor
        self.relative = (np.linalg.inv(self.bind_world[anchor]) @ self.bind_world).astype(np.float32)

    def _pose(self, turns: np.ndarray, hips_target: np.ndarray) -> np.ndarray:
        """World transforms (K, J, 4, 4) of the rig: the hips at `hips_target`, driven joints
        turned from their bind world rotation at their bind offset from their anchor, the others
        rigid with their anchor (bind-local all the way to it)."""
        count = turns.shape[0]
        world = np.zeros((count, self.rig.count, 4, 4), np.float32)
        world[..., 3, 3] = 1.0
        linear, position = world[..., :3, :3], world[..., :3, 3]
        hips = self.hips
        linear[:, hips] = turns[:, self.hips_row] @ self.bind_linear[hips]
        position[:, hips] = hips_target
        if len(self.above_hips):
            world[:, self.above_hips] = world[:, hips, None] @ self.relative[self.above_hips]
        for joints, rows in self.driven_groups:
            anchors = self.anchor[joints]
            linear[:, joints] = turns[:, rows] @ self.bind_linear[joints]
            position[:, joints] = position[:, anchors] + (
                linear[:, anchors] @ self.relative[joints, :3, 3, None])[..., 0]
        if len(self.kept):
            world[:, self.kept] = world[:, self.anchor[self.kept]] @ self.relative[self.kept]
        return world
