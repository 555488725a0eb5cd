"""A character rig read from glTF 2.0: its joints, their bind pose, and its skinned meshes.

Everything is stored in the demo's units (about 1 cm, y up): the file's metres are scaled by
UNITS_PER_METRE, and whatever sits above the skeleton (a Z-up root matrix, a scaled armature)
is kept in `root` so that the bind pose is the one the file shows.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np

from ..errors import PfnnError
from ..sim.skeleton import depth_levels, forward_kinematics

UNITS_PER_METRE = 100.0


class CharacterError(PfnnError):
    """A character file that cannot be read or driven (not glTF, no skin, no humanoid, a bad map)."""


@dataclasses.dataclass
class Primitive:
    """One skinned triangle list: vertices in the rig's bind-world space (demo units).

    `joints` index the rig's joints (up to 4 influences); a mesh hung rigidly on a joint has
    that joint with weight 1."""

    positions: np.ndarray      # (V, 3) float32
    normals: np.ndarray        # (V, 3) float32
    joints: np.ndarray         # (V, 4) int
    weights: np.ndarray        # (V, 4) float32, rows summing to 1
    indices: np.ndarray        # (T*3,) uint32
    colour: tuple[float, float, float, float]
    texcoords: np.ndarray | None = None     # (V, 2) float32
    image: bytes | None = None              # the base colour texture, encoded (PNG or JPEG)


@dataclasses.dataclass
class Rig:
    """A skeleton of `len(names)` joints, parents before children, and its meshes.

    `bind_local[j]`: joint j's transform relative to its parent (for a top joint: its world
    transform in the file's metres, the scene nodes above the skeleton included);
    `inverse_binds[j]`: the skin's inverse bind matrix, mapping bind-world space (the space of
    the primitives' vertices) into the joint's space."""

    path: Path
    names: list[str]
    parents: np.ndarray            # (J,) int32, -1 for joints hung from the root
    bind_local: np.ndarray         # (J, 4, 4) float64
    root: np.ndarray               # (4, 4) float64: metres to demo units, applied above the top joints
    inverse_binds: np.ndarray      # (J, 4, 4) float64
    primitives: list[Primitive]
    nodes: list[int] = dataclasses.field(default_factory=list)   # the file's node index of each joint

    @property
    def count(self) -> int:
        return len(self.names)

    def world(self, local: np.ndarray) -> np.ndarray:
        """World transforms (..., J, 4, 4) of local ones (root applied to the top joints)."""
        top = np.flatnonzero(self.parents < 0)
        local = local.copy()
        local[..., top, :, :] = self.root @ local[..., top, :, :]
        return forward_kinematics(local, np.maximum(self.parents, 0), depth_levels(self.parents))

    def bind_world(self) -> np.ndarray:
        """(J, 4, 4) world transforms of the bind pose."""
        return self.world(self.bind_local)

    def skin_matrices(self, world: np.ndarray) -> np.ndarray:
        """Skinning matrices (..., J, 4, 4, float32) of posed world transforms (float32)."""
        return world @ self._inverse_binds_32

    @functools.cached_property
    def _inverse_binds_32(self) -> np.ndarray:
        return self.inverse_binds.astype(np.float32)

    def children(self, joint: int) -> np.ndarray:
        return np.flatnonzero(self.parents == joint)

    def ancestors(self, joint: int) -> list[int]:
        """The joints from a top joint down to `joint`, both included."""
        chain = []
        while joint >= 0:
            chain.append(joint)
            joint = int(self.parents[joint])
        return chain[::-1]

    def is_ancestor(self, ancestor: int, joint: int) -> bool:
        """Whether `ancestor` is `joint` or lies above it."""
        return ancestor in self.ancestors(joint)

    def path_between(self, top: int, bottom: int) -> list[int]:
        """The joints from `top` down to `bottom`, both included (empty if not on one chain)."""
        chain = self.ancestors(bottom)
        return chain[chain.index(top):] if top in chain else []


def smooth_normals(positions: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Unit vertex normals (V, 3): the area-weighted sum of the normals of the triangles (T, 3)
    that meet at each vertex."""
    triangles = triangles.reshape(-1, 3)
    corners = positions[triangles].astype(np.float64)
    face = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normals = np.zeros((len(positions), 3))
    for k in range(3):
        np.add.at(normals, triangles[:, k], face)
    return normals / np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)


def load_rig(path: str | Path) -> Rig:
    """Read a humanoid rig from a .glb, or a .gltf with its buffers (CharacterError if it cannot)."""
    from .gltf_read import read_rig
    return read_rig(Path(path))
