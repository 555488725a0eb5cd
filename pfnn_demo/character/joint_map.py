"""Which joint of a rig plays which joint of the canonical skeleton.

Found automatically for the common naming conventions (Mixamo `mixamorig:`, Unreal and
Quaternius `pelvis`/`thigh_l`/`calf_l`, VRM humanoid bones, Blender `.L`/`.R`, `Left`/`Right`
prefixes, `L`/`R` suffixes, CMU names), case-insensitively, among the skin's joints; the trunk
(hips, spine, chest, neck) from the hierarchy between the legs, the arms and the head. A JSON
map from canonical joint names to the rig's node names overrides any of it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from ..sim.skeleton import JOINT_NAMES
from .rig import CharacterError, Rig

# Limbs and head by name: canonical joint -> base names (lower case, no side, no separators).
LIMB_NAMES = {
    "UpLeg": ("upleg", "upperleg", "thigh", "legupper", "femur", "hip"),
    "Leg": ("leg", "lowerleg", "calf", "shin", "knee", "leglower", "crus"),
    "Foot": ("foot", "ankle"),
    "ToeBase": ("toebase", "toe", "toes", "ball", "toe0"),
    "Shoulder": ("shoulder", "clavicle", "collar", "collarbone"),
    "Arm": ("arm", "upperarm", "armupper", "humerus"),
    "ForeArm": ("forearm", "lowerarm", "armlower", "elbow", "radius"),
    "Hand": ("hand", "wrist"),
}
HEAD_NAMES = ("head",)
HIPS_NAMES = ("hips", "pelvis", "hip", "root", "cog")
# Joints a rig must have to be driven; the rest are used where found.
# (A rig without hand joints, its palms hung from the forearm, is driven up to the wrists.)
REQUIRED = ("Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "RightUpLeg", "RightLeg", "RightFoot",
            "LeftArm", "LeftForeArm", "RightArm", "RightForeArm", "Head")
_PREFIXES = re.compile(r"^(mixamorig\d*[:_]|j_bip_c_|bip0?1[ _]?|def[-_]|org[-_]|mch[-_]|b_|bn_|jnt_|"
                       r"armature[:_|]|rig[:_|]|character\d*[:_|])")
_SEPARATORS = re.compile(r"[\s_.:\-|]+")


def _side_and_base(name: str) -> tuple[str, str]:
    """('Left' | 'Right' | '', base) of a joint name: `thigh_l` -> ('Left', 'thigh')."""
    text = name.strip()
    text = re.sub(r"^.*[|/]", "", text)                        # a path: keep the last part
    lower = text.lower()
    vrm = re.match(r"^j_bip_([lr])_", lower)                   # VRoid: J_Bip_L_UpperLeg
    if vrm:
        lower = ("left_" if vrm.group(1) == "l" else "right_") + lower[vrm.end():]
    lower = _PREFIXES.sub("", lower)
    side = ""
    patterns = [(r"^left", "Left"), (r"^right", "Right"), (r"left$", "Left"), (r"right$", "Right"),
                (r"^l[\s_.:\-]", "Left"), (r"^r[\s_.:\-]", "Right"),
                (r"[\s_.:\-]l$", "Left"), (r"[\s_.:\-]r$", "Right"),
                (r"[\s_.:\-]l[\s_.:\-]", "Left"), (r"[\s_.:\-]r[\s_.:\-]", "Right")]
    for pattern, found in patterns:
        if re.search(pattern, lower):
            side = found
            lower = re.sub(pattern, "_", lower, count=1)
            break
    else:
        # CMU's `LHipJoint`, COLLADA's `leg_joint_L_1`: a capital L or R glued to the name.
        match = re.match(r"^([LR])(?=[A-Z])", re.sub(r"^.*[:|]", "", text))
        if match:
            side = "Left" if match.group(1) == "L" else "Right"
            lower = lower[1:]
    base = _SEPARATORS.sub("", lower)
    base = re.sub(r"joint|jnt|bone|def$", "", base) or base
    base = re.sub(r"(?<=[a-z])0*1$", "", base) if not base.startswith("spine") else base
    return side, base


@dataclasses.dataclass
class JointMap:
    """Canonical joint name -> index of the rig's joint (only the joints found)."""

    joints: dict[str, int]
    rig: Rig

    def __contains__(self, name: str) -> bool:
        return name in self.joints

    def __getitem__(self, name: str) -> int:
        return self.joints[name]

    def missing(self) -> list[str]:
        return [name for name in REQUIRED if name not in self.joints]

    def unmapped(self) -> list[str]:
        """The rig's joints no canonical joint drives (they keep their bind pose under their parents)."""
        used = set(self.joints.values())
        return [name for j, name in enumerate(self.rig.names) if j not in used]

    def check(self) -> None:
        missing = self.missing()
        if missing:
            raise CharacterError(f"no humanoid found: no joint for {', '.join(missing)} "
                                 "(name them with --character-map)", self.rig.path)


def read_map_file(path: str | Path) -> dict[str, str]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CharacterError("no such file", path) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CharacterError(f"not a JSON joint map ({error})", path) from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise CharacterError("a joint map is one JSON object from canonical joint names to node names", path)
    unknown = [k for k in data if k not in JOINT_NAMES]
    if unknown:
        raise CharacterError(f"{', '.join(unknown)}: not canonical joint names (see pfnn_demo.JOINT_NAMES)", path)
    return data


def find_joint_map(rig: Rig, overrides: dict[str, str] | str | Path | None = None) -> JointMap:
    """The joint map of `rig`: by names and hierarchy, then `overrides` (a dict or a JSON file)."""
    map_path = None
    if overrides is not None and not isinstance(overrides, dict):
        map_path, overrides = Path(overrides), read_map_file(overrides)
    overrides = overrides or {}
    index_by_name: dict[str, int] = {}
    for j, name in enumerate(rig.names):
        index_by_name.setdefault(name, j)
        index_by_name.setdefault(name.lower(), j)
    fixed = {}
    for canonical, node in overrides.items():
        j = index_by_name.get(node, index_by_name.get(node.lower()))
        if j is None:
            raise CharacterError(f"the map names {node!r} for {canonical}, but the rig has no such joint "
                                 f"(its joints: {', '.join(rig.names[:8])}{', ...' if rig.count > 8 else ''})",
                                 map_path or rig.path)
        fixed[canonical] = j

    joints: dict[str, int] = {}
    parsed = [_side_and_base(name) for name in rig.names]
    for part, bases in LIMB_NAMES.items():
        for side in ("Left", "Right"):
            canonical = side + part
            joints[canonical] = _first(rig, parsed, side, bases)
    joints["Head"] = _first(rig, parsed, "", HEAD_NAMES)
    for canonical in ("LeftToeBase", "RightToeBase"):
        foot = joints.get(canonical.replace("ToeBase", "Foot"))
        if joints[canonical] is not None and foot is not None and not rig.is_ancestor(foot, joints[canonical]):
            joints[canonical] = None           # a toe must hang below its foot
    joints.update(fixed)
    joints = {k: v for k, v in joints.items() if v is not None}
    _trunk(rig, parsed, joints, fixed)
    return JointMap({name: joints[name] for name in JOINT_NAMES if name in joints}, rig)


def _first(rig: Rig, parsed, side: str, bases: tuple[str, ...]) -> int | None:
    """The shallowest joint of `side` whose base name is the first of `bases` that any joint has."""
    for base in bases:
        found = [j for j, (s, b) in enumerate(parsed) if s == side and b == base]
        if found:
            return found[0]      # joints are ordered parents first
    return None


def _common_ancestor(rig: Rig, joints: list[int]) -> int | None:
    chains = [rig.ancestors(j) for j in joints]
    common = None
    for level in zip(*chains):
        if len(set(level)) != 1:
            break
        common = level[0]
    return common


def _trunk(rig: Rig, parsed, joints: dict[str, int], fixed: dict[str, int]) -> None:
    """Hips, LowerBack, Spine, Spine1 (the chest), Neck and Neck1 from the hierarchy: the hips are
    the joint the legs and the head part from, the chest the one the arms part from."""
    legs = [joints[k] for k in ("LeftUpLeg", "RightUpLeg") if k in joints]
    head = joints.get("Head")
    if "Hips" not in fixed:
        named = _first(rig, parsed, "", HIPS_NAMES)
        if named is not None and head is not None and all(rig.is_ancestor(named, j) for j in legs + [head]):
            joints["Hips"] = named
        elif len(legs) == 2 and head is not None:
            common = _common_ancestor(rig, legs + [head])
            if common is not None:
                joints["Hips"] = common
        elif named is not None:
            joints["Hips"] = named
    hips = joints.get("Hips")
    if hips is None or head is None or not rig.is_ancestor(hips, head):
        return
    path = rig.path_between(hips, head)[1:-1]           # the spine and neck joints
    arms = [joints[k] for k in ("LeftShoulder", "RightShoulder", "LeftArm", "RightArm") if k in joints]
    arm_root = _common_ancestor(rig, arms[:2] if len(arms) >= 2 else arms + [head]) if arms else None
    chest = arm_root if arm_root in path else (path[-1] if path else None)
    if chest is None:
        return
    # The canonical LowerBack sits on the hips and Neck on the chest (no bone of their own), so
    # a rig's spine gives Spine (its middle joint below the chest) and its neck Neck1 (the joint
    # the head hangs from); the other trunk joints follow their parents.
    below = path[:path.index(chest)]
    above = path[path.index(chest) + 1:]
    trunk = {"Spine1": chest}
    if below:
        trunk["Spine"] = below[len(below) // 2]
    if above:
        trunk["Neck1"] = above[-1]
    for name, joint in trunk.items():
        if name not in fixed and joint not in fixed.values():
            joints[name] = joint
