"""Your own character: a humanoid glTF rig, mapped onto the canonical skeleton and driven by it.

Headless: nothing here imports moderngl or pygame (docs/characters.md).
"""

from .joint_map import JointMap, find_joint_map
from .rig import Rig, load_rig
from .retarget import Retargeter

__all__ = ["Rig", "load_rig", "JointMap", "find_joint_map", "Retargeter"]
