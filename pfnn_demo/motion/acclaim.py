"""Acclaim ASF (skeleton) and AMC (motion) files, the format the CMU database distributes.

An ASF bone has a rest `direction` and `length` in world axes, and local `axis` angles C (in the
bone's `axis` order). The AMC gives per frame the bone's dof values (in its `dof` order), a
rotation R about the axes of C. A bone's world rotation is its parent's times C R C^-1, and it
ends at its start plus that rotation applied to length x direction. At rest every world rotation
is the identity: exactly BVH's convention, so a bone becomes the BVH joint at its start with the
local rotation C R C^-1, and the joint at its end sits at its length x direction.

`load_amc` gives a clip in the 31-joint CMU BVH hierarchy (`sim.skeleton.JOINT_NAMES`), in the
CMU BVH units (ASF lengths at `:units length 0.45`), ready for the canonical retargeting.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from ..errors import PfnnError
from ..sim.rotation import axis_angle_matrix
from ..sim.skeleton import JOINT_NAMES, PARENTS
from .bvh import Motion, cmu_motion_from_world

CMU_FPS = 120.0                 # AMC files carry no frame rate unless they say :SAMPLES-PER-SECOND
CMU_LENGTH_UNIT = 0.45          # `:units length` of the CMU skeletons: their numbers are the BVH units
ROTATION_DOFS = ("rx", "ry", "rz")
TRANSLATION_DOFS = ("tx", "ty", "tz")
_UNIT_AXES = {"x": np.array([1.0, 0.0, 0.0]), "y": np.array([0.0, 1.0, 0.0]), "z": np.array([0.0, 0.0, 1.0])}

# The BVH joint each CMU bone starts at (the cgspeed conversion's names); the bone's rotation is
# that joint's. "root" is the hips.
CMU_BONE_OF_JOINT = {
    "Hips": "root", "LHipJoint": "lhipjoint", "LeftUpLeg": "lfemur", "LeftLeg": "ltibia", "LeftFoot": "lfoot",
    "LeftToeBase": "ltoes", "RHipJoint": "rhipjoint", "RightUpLeg": "rfemur", "RightLeg": "rtibia",
    "RightFoot": "rfoot", "RightToeBase": "rtoes", "LowerBack": "lowerback", "Spine": "upperback",
    "Spine1": "thorax", "Neck": "lowerneck", "Neck1": "upperneck", "Head": "head", "LeftShoulder": "lclavicle",
    "LeftArm": "lhumerus", "LeftForeArm": "lradius", "LeftHand": "lwrist", "LeftFingerBase": "lhand",
    "LeftHandIndex1": "lfingers", "LThumb": "lthumb", "RightShoulder": "rclavicle", "RightArm": "rhumerus",
    "RightForeArm": "rradius", "RightHand": "rwrist", "RightFingerBase": "rhand", "RightHandIndex1": "rfingers",
    "RThumb": "rthumb",
}
# Without these a skeleton cannot walk; the others (hands, neck, clavicles) may be missing and
# then stay at rest, with no length.
REQUIRED_BONES = ("lfemur", "ltibia", "lfoot", "rfemur", "rtibia", "rfoot")


class AcclaimError(PfnnError):
    """An ASF or AMC file that cannot be read."""


@dataclasses.dataclass
class Bone:
    name: str
    direction: np.ndarray          # (3,) unit rest direction, world axes
    length: float                  # in the file's length units
    axis: np.ndarray               # (3, 3) C: the bone's local axes
    dofs: list[str]                # e.g. ["rx", "ry", "rz"], the AMC's value order
    parent: str = "root"


@dataclasses.dataclass
class AsfSkeleton:
    name: str
    bones: dict[str, Bone]         # in hierarchy order: every parent before its children
    root_order: list[str]          # the root's dofs in the AMC's value order, e.g. TX TY TZ RX RY RZ
    root_axis: np.ndarray          # (3, 3) C of the root (its `orientation` in its `axis` order)
    root_position: np.ndarray      # (3,) added to the root's translation
    length_unit: float             # `:units length`: the file's numbers are inches x this
    degrees: bool                  # `:units angle`

    @property
    def to_cmu_units(self) -> float:
        """Multiplier from the file's lengths to the CMU BVH units."""
        return CMU_LENGTH_UNIT / self.length_unit


@dataclasses.dataclass
class AmcMotion:
    values: dict[str, np.ndarray]  # bone (or "root") -> (T, dofs) as written, angles in radians
    fps: float

    @property
    def frames(self) -> int:
        return len(next(iter(self.values.values())))


def _lines(path: Path, kind: type[Exception] = AcclaimError) -> list[tuple[int, list[str]]]:
    """(line number, tokens) of every line that is not blank or a comment; CRLF or LF."""
    try:
        text = path.read_text(encoding="latin-1")
    except OSError as error:
        raise kind(f"cannot read ({error.strerror or error})", path) from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            out.append((number, line.split()))
    return out


def euler_matrix(angles: np.ndarray, order: str) -> np.ndarray:
    """(..., 3, 3) rotation applying the angles (..., k) about the axes named by `order` (e.g.
    "xyz": about x first), in fixed axes: R = R_last ... R_first."""
    angles = np.asarray(angles, np.float64)
    result = np.broadcast_to(np.eye(3), angles.shape[:-1] + (3, 3))
    for k, axis in enumerate(order.lower()):
        turn = axis_angle_matrix(np.broadcast_to(_UNIT_AXES[axis], angles.shape[:-1] + (3,)), angles[..., k])
        result = turn @ result
    return result


def _floats(tokens: list[str], count: int, path: Path, number: int, what: str) -> np.ndarray:
    if len(tokens) < count:
        raise AcclaimError(f"line {number}: {what} needs {count} numbers, found {len(tokens)}", path)
    try:
        return np.array([float(t) for t in tokens[:count]])
    except ValueError:
        raise AcclaimError(f"line {number}: {what} has a value that is not a number: {' '.join(tokens)}",
                           path) from None


def _axis_order(token: str, path: Path, number: int) -> str:
    order = token.lower()
    if sorted(order) != ["x", "y", "z"]:
        raise AcclaimError(f"line {number}: axis order '{token}' is not a permutation of XYZ", path)
    return order


def read_asf(path: str | Path) -> AsfSkeleton:
    path = Path(path)
    lines = _lines(path)
    if not any(tokens[0].lower() == ":bonedata" for _, tokens in lines):
        raise AcclaimError("not an ASF skeleton (no :bonedata section)", path)
    name, length_unit, degrees = path.stem, 1.0, True
    root_order, root_axis_order = ["tx", "ty", "tz", "rx", "ry", "rz"], "xyz"
    root_position, root_orientation = np.zeros(3), np.zeros(3)
    raw_bones: list[dict] = []
    hierarchy: list[tuple[int, list[str]]] = []
    section, bone = "", None
    for number, tokens in lines:
        key = tokens[0].lower()
        if key.startswith(":"):
            section = key
            if key == ":name" and len(tokens) > 1:
                name = tokens[1]
            continue
        if section == ":units":
            if key == "length":
                length_unit = float(_floats(tokens[1:], 1, path, number, "length unit")[0])
                if length_unit <= 0:
                    raise AcclaimError(f"line {number}: the length unit must be positive", path)
            elif key == "angle":
                if len(tokens) < 2 or tokens[1].lower() not in ("deg", "rad"):
                    raise AcclaimError(f"line {number}: angle unit must be 'deg' or 'rad'", path)
                degrees = tokens[1].lower() == "deg"
        elif section == ":root":
            if key == "order":
                root_order = [t.lower() for t in tokens[1:]]
                unknown = [t for t in root_order if t not in ROTATION_DOFS + TRANSLATION_DOFS]
                if unknown:
                    raise AcclaimError(f"line {number}: unknown root channel '{unknown[0]}'", path)
            elif key == "axis":
                root_axis_order = _axis_order(tokens[1] if len(tokens) > 1 else "", path, number)
            elif key == "position":
                root_position = _floats(tokens[1:], 3, path, number, "root position")
            elif key == "orientation":
                root_orientation = _floats(tokens[1:], 3, path, number, "root orientation")
        elif section == ":bonedata":
            if key == "begin":
                bone = {"line": number, "dofs": []}
            elif key == "end":
                if bone is None:
                    raise AcclaimError(f"line {number}: 'end' without 'begin'", path)
                raw_bones.append(bone)
                bone = None
            elif bone is None:
                raise AcclaimError(f"line {number}: '{tokens[0]}' outside a begin ... end bone", path)
            elif key == "name":
                bone["name"] = tokens[1]
            elif key == "direction":
                bone["direction"] = _floats(tokens[1:], 3, path, number, "direction")
            elif key == "length":
                bone["length"] = float(_floats(tokens[1:], 1, path, number, "length")[0])
            elif key == "axis":
                bone["axis"] = _floats(tokens[1:], 3, path, number, "axis")
                bone["axis_order"] = _axis_order(tokens[4] if len(tokens) > 4 else "XYZ", path, number)
            elif key == "dof":
                bone["dofs"] = [t.lower() for t in tokens[1:]]
                unknown = [t for t in bone["dofs"] if t not in ROTATION_DOFS + TRANSLATION_DOFS + ("l",)]
                if unknown:
                    raise AcclaimError(f"line {number}: unknown dof '{unknown[0]}'", path)
        elif section == ":hierarchy" and key not in ("begin", "end"):
            hierarchy.append((number, tokens))
    angle = np.radians if degrees else (lambda a: np.asarray(a, np.float64))
    bones: dict[str, Bone] = {}
    for raw in raw_bones:
        missing = [k for k in ("name", "direction", "length") if k not in raw]
        if missing:
            raise AcclaimError(f"line {raw['line']}: bone without '{missing[0]}'", path)
        direction = raw["direction"]
        norm = np.linalg.norm(direction)
        direction = direction / norm if norm > 1e-12 else np.zeros(3)
        axis = euler_matrix(angle(raw.get("axis", np.zeros(3))), raw.get("axis_order", "xyz"))
        bones[raw["name"]] = Bone(raw["name"], direction, raw["length"], axis, raw["dofs"], parent="")
    for number, tokens in hierarchy:
        parent = tokens[0]
        if parent != "root" and parent not in bones:
            raise AcclaimError(f"line {number}: the hierarchy names '{parent}', which is not a bone", path)
        for child in tokens[1:]:
            if child not in bones:
                raise AcclaimError(f"line {number}: the hierarchy names '{child}', which is not a bone", path)
            bones[child].parent = parent
    ordered: dict[str, Bone] = {}

    def place(bone_name: str, trail: tuple[str, ...] = ()) -> None:
        if bone_name in ordered:
            return
        bone = bones[bone_name]
        if not bone.parent:
            raise AcclaimError(f"bone '{bone_name}' is not in the :hierarchy", path)
        if bone_name in trail:
            raise AcclaimError(f"the :hierarchy loops through '{bone_name}'", path)
        if bone.parent != "root":
            place(bone.parent, trail + (bone_name,))
        ordered[bone_name] = bone

    for bone_name in bones:
        place(bone_name)
    return AsfSkeleton(name, ordered, root_order, euler_matrix(angle(root_orientation), root_axis_order),
                       root_position, length_unit, degrees)


def read_amc(path: str | Path, skeleton: AsfSkeleton) -> AmcMotion:
    """Every frame's dof values. A bone missing from a frame keeps its previous frame's values
    (its rest pose before its first appearance)."""
    path = Path(path)
    dof_count = {name: len(bone.dofs) for name, bone in skeleton.bones.items()}
    dof_count["root"] = len(skeleton.root_order)
    degrees, fps = skeleton.degrees, CMU_FPS
    frames: list[dict[str, np.ndarray]] = []
    for number, tokens in _lines(path):
        key = tokens[0]
        if key.startswith(":"):
            if key.upper() == ":DEGREES":
                degrees = True
            elif key.upper() == ":RADIANS":
                degrees = False
            elif key.upper() == ":SAMPLES-PER-SECOND" and len(tokens) > 1:
                fps = float(_floats(tokens[1:], 1, path, number, "samples per second")[0])
                if fps <= 0:
                    raise AcclaimError(f"line {number}: samples per second must be positive", path)
            continue
        if len(tokens) == 1 and key.isdigit():
            frames.append({})
            continue
        if not frames:
            raise AcclaimError(f"line {number}: '{key}' before the first frame number", path)
        if key not in dof_count:
            raise AcclaimError(f"line {number}: bone '{key}' is not in the skeleton '{skeleton.name}'", path)
        if len(tokens) - 1 != dof_count[key]:
            raise AcclaimError(f"line {number}: bone '{key}' has {len(tokens) - 1} values, its skeleton gives it "
                               f"{dof_count[key]} dofs", path)
        frames[-1][key] = _floats(tokens[1:], dof_count[key], path, number, key)
    if not frames:
        raise AcclaimError("no frames", path)
    values = {}
    for name, count in dof_count.items():
        order = skeleton.root_order if name == "root" else skeleton.bones[name].dofs
        rotation = np.array([d in ROTATION_DOFS for d in order], bool)
        column = np.zeros((len(frames), count))
        current = np.zeros(count)
        for k, frame in enumerate(frames):
            current = frame.get(name, current)
            column[k] = current
        if degrees:
            column[:, rotation] = np.radians(column[:, rotation])
        values[name] = column
    return AmcMotion(values, fps)


def _rotation(dofs: list[str], values: np.ndarray) -> np.ndarray:
    """(T, 3, 3) rotation of the rotation dofs among `dofs`, applied in the order they are listed."""
    picked = [k for k, d in enumerate(dofs) if d in ROTATION_DOFS]
    if not picked:
        return np.broadcast_to(np.eye(3), (len(values), 3, 3))
    return euler_matrix(values[:, picked], "".join(dofs[k][1] for k in picked))


def bone_transforms(skeleton: AsfSkeleton, motion: AmcMotion) -> tuple[dict, dict, np.ndarray]:
    """Forward kinematics as the ASF/AMC define it: ({bone: (T, 3, 3) world rotation},
    {bone: (T, 3) world end point}, (T, 3) root position), in the CMU BVH units."""
    scale = skeleton.to_cmu_units
    root_values = motion.values["root"]
    translation = np.zeros((motion.frames, 3))
    for k, dof in enumerate(skeleton.root_order):
        if dof in TRANSLATION_DOFS:
            translation[:, "xyz".index(dof[1])] = root_values[:, k]
    root = (translation + skeleton.root_position) * scale
    C = skeleton.root_axis
    rotations = {"root": C @ _rotation(skeleton.root_order, root_values) @ C.T}
    ends = {"root": root}
    for name, bone in skeleton.bones.items():
        local = bone.axis @ _rotation(bone.dofs, motion.values[name]) @ bone.axis.T
        rotations[name] = rotations[bone.parent] @ local
        ends[name] = ends[bone.parent] + rotations[name] @ (bone.direction * bone.length * scale)
    return rotations, ends, root


def cmu_motion(skeleton: AsfSkeleton, motion: AmcMotion, path: Path | None = None) -> Motion:
    """The clip as a `Motion` in the 31-joint CMU BVH hierarchy, on the subject's own bones."""
    missing = [b for b in REQUIRED_BONES if b not in skeleton.bones]
    if missing:
        raise AcclaimError(f"not a CMU-style skeleton: it has no bone '{missing[0]}'", path)
    scale = skeleton.to_cmu_units
    world, _, root = bone_transforms(skeleton, motion)
    frames = motion.frames
    bone_of = [CMU_BONE_OF_JOINT[name] for name in JOINT_NAMES]
    global_rotation = np.stack([world.get(b, None) if b in world else np.full((frames, 3, 3), np.nan)
                                for b in bone_of], axis=1)
    offsets = np.zeros((len(JOINT_NAMES), 3))
    for joint, parent in enumerate(PARENTS):
        if parent < 0:
            continue
        parent_bone = skeleton.bones.get(bone_of[parent])
        if parent_bone is not None and bone_of[joint] in skeleton.bones:
            offsets[joint] = parent_bone.direction * parent_bone.length * scale
    # A bone the skeleton lacks turns with its parent joint.
    for joint, parent in enumerate(PARENTS):
        if np.isnan(global_rotation[0, joint, 0, 0]):
            global_rotation[:, joint] = global_rotation[:, parent]
    return cmu_motion_from_world(global_rotation, root, offsets, 1.0 / motion.fps)


def subject_asf(amc: Path) -> Path:
    """The skeleton beside a clip, as CMU lays them out: 02_01.amc -> 02.asf."""
    return amc.with_name(amc.stem.split("_")[0] + ".asf")


def load_amc(path: str | Path, asf: str | Path | None = None) -> Motion:
    """An AMC clip (with its subject's ASF, by default the one beside it) as a 31-joint CMU BVH
    `Motion`."""
    path = Path(path)
    if asf is not None and not Path(asf).is_file():
        raise AcclaimError("no such skeleton file", asf)
    asf = Path(asf) if asf is not None else subject_asf(path)
    if not asf.is_file():
        raise AcclaimError(f"no skeleton {asf.name} beside it (give one with --asf SUBJECT.asf)", path)
    if not path.is_file():
        raise AcclaimError("no such motion file", path)
    skeleton = read_asf(asf)
    return cmu_motion(skeleton, read_amc(path, skeleton), asf)
