"""Your own character: a humanoid glTF rig, mapped onto the canonical skeleton and driven by it.

Headless: nothing here imports moderngl or pygame (docs/characters.md).
"""

from .joint_map import JointMap, find_joint_map
from .rig import CharacterError, Rig, load_rig
from .retarget import Retargeter

__all__ = ["Rig", "load_rig", "JointMap", "find_joint_map", "Retargeter", "CharacterError", "load_character"]


def load_character(path, character_map=None) -> tuple[Rig, JointMap, Retargeter]:
    """A rig, its joint map (automatic, then `character_map`: a dict or a JSON file) and its
    retargeter; CharacterError (one line) if the file cannot be read or driven."""
    rig = load_rig(path)
    joint_map = find_joint_map(rig, character_map)
    return rig, joint_map, Retargeter(rig, joint_map)
