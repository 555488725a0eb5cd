"""Your own character: a humanoid glTF rig, mapped onto the canonical skeleton and driven by it.

Headless: nothing here imports moderngl or pygame (docs/characters.md).
"""

from pathlib import Path

from .joint_map import JointMap, find_joint_map
from .rig import CharacterError, Rig, load_rig
from .retarget import Retargeter

__all__ = ["Rig", "load_rig", "JointMap", "find_joint_map", "Retargeter", "CharacterError", "load_character"]


def rig_files(folder: Path) -> list[Path]:
    """The .glb and .gltf files in `folder` (none if it is not a folder), by name."""
    folder = Path(folder)
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in (".glb", ".gltf")) if folder.is_dir() else []


def bundled_characters() -> list[Path]:
    """The rigs shipped with the demo (characters/ in a checkout, inside the package when installed)."""
    from ..resources import data_dir

    try:
        return rig_files(data_dir("characters"))
    except FileNotFoundError:
        return []


def resolve_character(path) -> Path:
    """A rig's path: as given, or the bundled rig of that name (`--character RobotExpressive`)."""
    path = Path(path)
    if not path.exists():
        for bundled in bundled_characters():
            if bundled.stem.lower() == path.stem.lower() and path.parent == Path("."):
                return bundled
    return path


def load_character(path, character_map=None) -> tuple[Rig, JointMap, Retargeter]:
    """A rig (a path, or a bundled rig's name), its joint map (automatic, then `character_map`: a
    dict or a JSON file) and its retargeter; CharacterError (one line) if the file cannot be read
    or driven."""
    rig = load_rig(resolve_character(path))
    joint_map = find_joint_map(rig, character_map)
    return rig, joint_map, Retargeter(rig, joint_map)
