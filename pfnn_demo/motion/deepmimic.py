"""DeepMimic motion files and their retargeting onto the canonical 31-joint skeleton.

A DeepMimic motion (the `humanoid3d` character of the DeepMimic project, shipped with pybullet)
is JSON: {"Loop": "wrap" | "none", "Frames": [[dt, root xyz, root wxyz, chest wxyz, neck wxyz,
right hip wxyz, right knee angle, right ankle wxyz, right shoulder wxyz, right elbow angle, left
hip wxyz, left knee angle, left ankle wxyz, left shoulder wxyz, left elbow angle], ...]}; metres,
y up, the character faces +x with its right side on +z; knees and elbows turn about local z.

Retargeting copies each source joint's world rotation onto its canonical counterpart, corrected
by the rotation that takes the canonical rest bone onto the source's rest bone (the arms hang
down in the source and stretch out in the canonical T-pose). Joints the source lacks follow
documented rules: clavicles, toes and fingers stay at rest relative to their parents; the
source's chest bend is spread over Spine and Spine1, its neck bend over Neck1 and Head. The
root's path is scaled by the ratio of leg lengths.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from ..errors import PfnnError
from ..sim.rotation import matrix_to_quat, quat_slerp, quat_to_matrix, rotation_between, yaw_matrix
from ..sim.skeleton import JOINT_NAMES, PARENTS, _REST_OFFSETS_BVH
from .bvh import Motion, cmu_motion_from_world

FRAME_VALUES = 44
# Source joints in file order: (name, parent, rest offset in metres, 1-DoF).
SOURCE_JOINTS = (
    ("root", -1, (0.0, 0.0, 0.0), False),
    ("chest", 0, (0.0, 0.236151, 0.0), False),
    ("neck", 1, (0.0, 0.223894, 0.0), False),
    ("right_hip", 0, (0.0, 0.0, 0.084887), False),
    ("right_knee", 3, (0.0, -0.421546, 0.0), True),
    ("right_ankle", 4, (0.0, -0.40987, 0.0), False),
    ("right_shoulder", 1, (-0.02405, 0.2435, 0.18311), False),
    ("right_elbow", 6, (0.0, -0.274788, 0.0), True),
    ("left_hip", 0, (0.0, 0.0, -0.084887), False),
    ("left_knee", 8, (0.0, -0.421546, 0.0), True),
    ("left_ankle", 9, (0.0, -0.40987, 0.0), False),
    ("left_shoulder", 1, (-0.02405, 0.2435, -0.18311), False),
    ("left_elbow", 11, (0.0, -0.274788, 0.0), True),
)
SOURCE_INDEX = {name: k for k, (name, *_rest) in enumerate(SOURCE_JOINTS)}
WRIST_OFFSET = (0.0, -0.258947, 0.0)
BALL_OF_FOOT = (0.11, -0.045, 0.0)       # on the source's foot box, from the ankle
# Source axes (forward +x, right +z) to the demo's (forward +z, left +x): a -90 degree yaw.
TO_DEMO = yaw_matrix(-np.pi / 2, np.float64)


class DeepMimicError(PfnnError):
    """A DeepMimic motion file that cannot be used."""


@dataclasses.dataclass
class DeepMimicMotion:
    frame_time: float
    loops: bool
    root_positions: np.ndarray      # (T, 3) metres
    rotations: np.ndarray           # (T, 13, 3, 3) local rotations of SOURCE_JOINTS

    @property
    def frames(self) -> int:
        return len(self.root_positions)

    def world_rotations(self) -> np.ndarray:
        world = np.empty_like(self.rotations)
        for joint, (_name, parent, _offset, _hinge) in enumerate(SOURCE_JOINTS):
            world[:, joint] = self.rotations[:, joint] if parent < 0 else world[:, parent] @ self.rotations[:, joint]
        return world

    def world_positions(self) -> np.ndarray:
        """(T, 13, 3) joint positions in metres (source axes)."""
        world = self.world_rotations()
        positions = np.empty(world.shape[:2] + (3,))
        for joint, (_name, parent, offset, _hinge) in enumerate(SOURCE_JOINTS):
            positions[:, joint] = (self.root_positions if parent < 0
                                   else positions[:, parent] + world[:, parent] @ np.array(offset))
        return positions


def read_deepmimic(path: str | Path) -> DeepMimicMotion:
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DeepMimicError(f"cannot read as a DeepMimic motion ({error})", path) from None
    frames = document.get("Frames") if isinstance(document, dict) else None
    if not isinstance(frames, list) or len(frames) < 2:
        raise DeepMimicError("needs a 'Frames' list of at least 2 frames", path)
    try:
        values = np.array(frames, dtype=np.float64)
    except (TypeError, ValueError):
        raise DeepMimicError("'Frames' must hold rows of numbers of one length", path) from None
    if values.ndim != 2 or values.shape[1] != FRAME_VALUES:
        raise DeepMimicError(f"each frame must hold {FRAME_VALUES} numbers (the humanoid3d character), "
                             f"found shape {values.shape}", path)
    if not np.all(np.isfinite(values)):
        raise DeepMimicError("holds NaN or infinite values", path)
    frame_time = float(values[0, 0])
    if frame_time <= 0:
        raise DeepMimicError(f"frame duration must be positive, found {frame_time}", path)
    rotations = np.empty((len(values), len(SOURCE_JOINTS), 3, 3))
    column = 4
    for joint, (_name, _parent, _offset, hinge) in enumerate(SOURCE_JOINTS):
        if hinge:
            angle = values[:, column]
            c, s = np.cos(angle), np.sin(angle)
            rotations[:, joint] = 0.0
            rotations[:, joint, 0, 0], rotations[:, joint, 0, 1] = c, -s
            rotations[:, joint, 1, 0], rotations[:, joint, 1, 1] = s, c
            rotations[:, joint, 2, 2] = 1.0
            column += 1
        else:
            quat = values[:, column:column + 4]
            norm = np.linalg.norm(quat, axis=1, keepdims=True)
            if np.any(norm < 1e-6):
                raise DeepMimicError(f"has a zero quaternion for joint '{_name}'", path)
            rotations[:, joint] = quat_to_matrix(quat / norm)
            column += 4
    return DeepMimicMotion(frame_time, document.get("Loop") == "wrap", values[:, 1:4].copy(), rotations)


def _heading(rotation: np.ndarray) -> float:
    forward = rotation @ np.array([1.0, 0.0, 0.0])
    return float(np.arctan2(-forward[2], forward[0]))          # about +y, source axes


def tile_loop(motion: DeepMimicMotion, repeats: int) -> DeepMimicMotion:
    """A looping motion played `repeats` times: its last frame is the first pose moved on, so each
    repetition of frames [0, T-1) starts where the previous one ended, turned and shifted."""
    if repeats <= 1 or not motion.loops:
        return motion
    turn = _heading(motion.rotations[-1, 0]) - _heading(motion.rotations[0, 0])
    step = motion.root_positions[-1] - motion.root_positions[0]
    step[1] = 0.0
    body = slice(0, motion.frames - 1)
    positions, rotations = [], []
    heading, offset = 0.0, np.zeros(3)
    start = motion.root_positions[0] * np.array([1.0, 0.0, 1.0])
    for _ in range(repeats):
        turning = yaw_matrix(heading, np.float64)
        positions.append((motion.root_positions[body] - start) @ turning.T + start + offset)
        rotations.append(np.concatenate([turning @ motion.rotations[body, :1], motion.rotations[body, 1:]], axis=1))
        offset = offset + turning @ step
        heading += turn
    return DeepMimicMotion(motion.frame_time, False, np.concatenate(positions), np.concatenate(rotations))


def _source_bone(name: str) -> np.ndarray:
    """Rest direction of a source joint's bone (towards its child), in demo axes."""
    child = {"root": None, "chest": "neck", "right_hip": "right_knee", "right_knee": "right_ankle",
             "right_shoulder": "right_elbow", "left_hip": "left_knee", "left_knee": "left_ankle",
             "left_shoulder": "left_elbow"}.get(name)
    if child is not None:
        offset = SOURCE_JOINTS[SOURCE_INDEX[child]][2]
    elif name.endswith("ankle"):
        offset = BALL_OF_FOOT
    elif name.endswith("elbow"):
        offset = WRIST_OFFSET
    else:
        offset = (0.0, 1.0, 0.0)
    return TO_DEMO @ np.array(offset)


# Canonical joint -> (source joint, share of the source joint's local rotation past its parent).
JOINT_MAP = {
    "Hips": ("root", 1.0), "LeftUpLeg": ("left_hip", 1.0), "LeftLeg": ("left_knee", 1.0),
    "LeftFoot": ("left_ankle", 1.0), "RightUpLeg": ("right_hip", 1.0), "RightLeg": ("right_knee", 1.0),
    "RightFoot": ("right_ankle", 1.0), "Spine": ("chest", 0.5), "Spine1": ("chest", 1.0),
    "Neck1": ("neck", 0.5), "Head": ("neck", 1.0), "LeftArm": ("left_shoulder", 1.0),
    "LeftForeArm": ("left_elbow", 1.0), "LeftHand": ("left_elbow", 1.0), "RightArm": ("right_shoulder", 1.0),
    "RightForeArm": ("right_elbow", 1.0), "RightHand": ("right_elbow", 1.0),
}
# Bones whose rest direction differs between the two skeletons enough to need a correction.
CORRECTED = ("LeftUpLeg", "LeftLeg", "RightUpLeg", "RightLeg", "LeftArm", "LeftForeArm", "LeftHand",
             "RightArm", "RightForeArm", "RightHand")


def _canonical_bone(joint: int) -> np.ndarray:
    children = np.flatnonzero(PARENTS == joint)
    offsets = [_REST_OFFSETS_BVH[c] for c in children if np.linalg.norm(_REST_OFFSETS_BVH[c]) > 1e-9]
    if not offsets:       # a hand: its finger base sits on it; the hand continues the forearm
        return _REST_OFFSETS_BVH[joint]
    return offsets[0]


def canonical_world_rotations(motion: DeepMimicMotion) -> np.ndarray:
    """(T, 31, 3, 3) world rotations of the canonical skeleton, demo axes."""
    source = TO_DEMO @ motion.world_rotations() @ TO_DEMO.T
    local = TO_DEMO @ motion.rotations @ TO_DEMO.T
    frames = motion.frames
    world = np.empty((frames, len(JOINT_NAMES), 3, 3))
    for joint, name in enumerate(JOINT_NAMES):
        parent = PARENTS[joint]
        if name not in JOINT_MAP:
            world[:, joint] = np.eye(3) if parent < 0 else world[:, parent]
            continue
        source_name, share = JOINT_MAP[name]
        k = SOURCE_INDEX[source_name]
        if share >= 1.0:
            rotation = source[:, k]
        else:
            partial = quat_to_matrix(quat_slerp(np.broadcast_to([1.0, 0, 0, 0], (frames, 4)),
                                                matrix_to_quat(local[:, k]), np.full(frames, share)))
            rotation = source[:, SOURCE_JOINTS[k][1]] @ partial
        if name in CORRECTED:
            rotation = rotation @ rotation_between(_canonical_bone(joint)[None], _source_bone(source_name)[None])[0]
        world[:, joint] = rotation
    return world


def leg_length_metres() -> float:
    return sum(abs(SOURCE_JOINTS[SOURCE_INDEX[n]][2][1]) for n in ("left_knee", "left_ankle"))


def _canonical_leg_length() -> float:
    return float(np.linalg.norm(_REST_OFFSETS_BVH[[3, 4]], axis=1).sum())


def to_canonical_motion(motion: DeepMimicMotion) -> Motion:
    """The motion on the canonical skeleton as a BVH `Motion` (CMU channel layout, BVH units)."""
    world = canonical_world_rotations(motion)
    scale = _canonical_leg_length() / leg_length_metres()
    root = (motion.root_positions @ TO_DEMO.T) * scale
    return cmu_motion_from_world(world, root, _REST_OFFSETS_BVH.copy(), motion.frame_time)


def load_deepmimic(path: str | Path, seconds: float = 0.0) -> Motion:
    """Read a DeepMimic motion, loop it to at least `seconds` if it loops, and retarget it."""
    motion = read_deepmimic(path)
    if motion.loops and seconds > 0:
        cycle = (motion.frames - 1) * motion.frame_time
        motion = tile_loop(motion, int(np.ceil(seconds / cycle)))
    return to_canonical_motion(motion)
