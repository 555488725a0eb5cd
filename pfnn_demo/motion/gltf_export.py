"""Played motion as a glTF 2.0 animation (.glb), one key per frame, written through pygltflib.

On a user's rig (character.Rig posed by a character.Retargeter): its joints, its skinned meshes
and materials, the motion scaled back to the rig's own size (the root travels the canonical
root's path scaled by the ratio of leg lengths). Without a rig: the 31-joint skeleton with the
mannequin's body. A crowd writes one skeleton, skin and animated character per character.
glTF's conventions: y up, metres (the rig's own units, which glTF fixes as metres).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..character.rig import UNITS_PER_METRE
from ..sim.skeleton import JOINT_NAMES, PARENTS, rest_pose_globals

_FLOAT, _UINT, _USHORT = 5126, 5125, 5123
_ARRAY_BUFFER, _ELEMENT_BUFFER = 34962, 34963


def _matrix_to_quaternion(m: np.ndarray) -> np.ndarray:
    """(..., 3, 3) rotations -> (..., 4) unit quaternions (x, y, z, w), w >= 0."""
    from ..sim.rotation import matrix_to_quat

    q = matrix_to_quat(m)              # (w, x, y, z)
    q = q * np.where(q[..., :1] < 0, -1.0, 1.0)
    return np.concatenate([q[..., 1:], q[..., :1]], axis=-1)


def _decompose(local: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Translation, rotation (quaternion x, y, z, w) and scale of (..., 4, 4) transforms without shear."""
    linear = local[..., :3, :3]
    scale = np.linalg.norm(linear, axis=-2)
    rotation = linear / np.maximum(scale[..., None, :], 1e-12)
    flip = np.linalg.det(rotation) < 0                  # a mirroring scale: put it on x
    scale[..., 0] = np.where(flip, -scale[..., 0], scale[..., 0])
    rotation[..., :, 0] = np.where(flip[..., None], -rotation[..., :, 0], rotation[..., :, 0])
    # Quaternion continuity over time: no sign flips between neighbouring keys.
    quaternions = _matrix_to_quaternion(rotation)
    if quaternions.ndim >= 2 and len(quaternions) > 1:
        dots = np.sum(quaternions[1:] * quaternions[:-1], axis=-1)
        signs = np.cumprod(np.where(dots < 0, -1.0, 1.0), axis=0)
        quaternions[1:] *= signs[..., None]
    return local[..., :3, 3], quaternions, scale


class _Writer:
    """Buffers, views and accessors of one binary buffer."""

    def __init__(self):
        import pygltflib

        self.gltf = pygltflib
        self.document = pygltflib.GLTF2(asset=pygltflib.Asset(generator="pfnn-demo", version="2.0"))
        self.blob = bytearray()

    def accessor(self, values: np.ndarray, kind: str, component: int = _FLOAT, target: int | None = None,
                 bounds: bool = False) -> int:
        g = self.gltf
        data = np.ascontiguousarray(values).tobytes()
        while len(self.blob) % 4:
            self.blob.append(0)
        view = g.BufferView(buffer=0, byteOffset=len(self.blob), byteLength=len(data), target=target)
        self.blob.extend(data)
        self.document.bufferViews.append(view)
        count = len(values)
        accessor = g.Accessor(bufferView=len(self.document.bufferViews) - 1, componentType=component,
                              count=count, type=kind)
        if bounds:
            flat = np.asarray(values, np.float64).reshape(count, -1)
            accessor.min, accessor.max = flat.min(axis=0).tolist(), flat.max(axis=0).tolist()
        self.document.accessors.append(accessor)
        return len(self.document.accessors) - 1

    def save(self, path: Path) -> None:
        self.document.buffers.append(self.gltf.Buffer(byteLength=len(self.blob)))
        self.document.set_binary_blob(bytes(self.blob))
        path.write_bytes(b"".join(self.document.save_to_bytes()))      # whole, or nothing written


class _Body:
    """What one exported character is made of: joints (names, parents, bind world in drawn units),
    the skin's inverse bind matrices, triangle parts (positions, normals, joints, weights,
    indices, colour), and a function from drawn canonical poses to its joints' world transforms."""

    def __init__(self, names, parents, inverse_binds, parts, pose, scale: float):
        self.names, self.parents, self.inverse_binds, self.parts = names, np.asarray(parents), inverse_binds, parts
        self.pose, self.scale = pose, scale


def mannequin_body() -> _Body:
    from ..app.render.character_mesh import MANNEQUIN_ALBEDO, build_character_mesh  # no OpenGL here
    from ..app.render.lighting import GAMMA

    vertices, indices = build_character_mesh()
    rest = np.tile(np.eye(4), (len(JOINT_NAMES), 1, 1))
    rest[:, :3, 3] = rest_pose_globals()
    part = (vertices[:, 0:3], vertices[:, 3:6], vertices[:, 6:10].astype(np.uint16), vertices[:, 10:14], indices,
            tuple(float(c) ** GAMMA for c in MANNEQUIN_ALBEDO) + (1.0,))     # glTF's colours are linear
    return _Body(list(JOINT_NAMES), PARENTS, np.linalg.inv(rest), [part], lambda drawn: drawn, 1.0)


def rig_body(rig, retargeter, ground=None) -> _Body:
    parts = [(p.positions, p.normals, p.joints.astype(np.uint16), p.weights, p.indices,
              tuple(p.colour)) for p in rig.primitives]
    return _Body(rig.names, rig.parents, rig.inverse_binds, parts, lambda drawn: retargeter(drawn, ground),
                 retargeter.scale)


def write_gltf(path: str | Path, drawn: np.ndarray, fps: float, body: _Body | None = None) -> Path:
    """Write (T, 31, 4, 4) drawn poses of one character, or (K, T, 31, 4, 4) of a crowd, as a
    .glb animation of `body` (the mannequin by default)."""
    path = Path(path)
    body = body or mannequin_body()
    drawn = np.asarray(drawn, np.float32)
    crowd = drawn[None] if drawn.ndim == 4 else drawn
    count, frames = crowd.shape[:2]
    worlds = body.pose(crowd.reshape((count * frames,) + crowd.shape[2:])).astype(np.float64)
    worlds = worlds.reshape((count, frames) + worlds.shape[1:])        # (K, T, J, 4, 4)
    writer = _Writer()
    g, document = writer.gltf, writer.document
    # Metres, at the rig's own size: the drawn motion scaled down by the drawing's scale.
    document.nodes.append(g.Node(name="pfnn-demo", scale=[1.0 / (UNITS_PER_METRE * body.scale)] * 3))
    document.scenes.append(g.Scene(nodes=[0]))
    document.scene = 0
    materials = {}
    meshes = []
    for positions, normals, joints, weights, indices, colour in body.parts:
        if colour not in materials:
            materials[colour] = len(document.materials)
            document.materials.append(g.Material(pbrMetallicRoughness=g.PbrMetallicRoughness(
                baseColorFactor=list(colour), metallicFactor=0.0, roughnessFactor=0.8)))
        attributes = g.Attributes(
            POSITION=writer.accessor(positions.astype(np.float32), "VEC3", target=_ARRAY_BUFFER, bounds=True),
            NORMAL=writer.accessor(normals.astype(np.float32), "VEC3", target=_ARRAY_BUFFER),
            JOINTS_0=writer.accessor(joints.astype(np.uint16), "VEC4", _USHORT, _ARRAY_BUFFER),
            WEIGHTS_0=writer.accessor(weights.astype(np.float32), "VEC4", target=_ARRAY_BUFFER))
        meshes.append(g.Primitive(attributes=attributes, indices=writer.accessor(
            indices.astype(np.uint32).reshape(-1, 1), "SCALAR", _UINT, _ELEMENT_BUFFER), material=materials[colour]))
    document.meshes.append(g.Mesh(name="body", primitives=meshes))
    times = writer.accessor((np.arange(frames, dtype=np.float32) / fps)[:, None], "SCALAR", bounds=True)
    inverse_binds = writer.accessor(np.swapaxes(body.inverse_binds, -1, -2).astype(np.float32).reshape(-1, 16), "MAT4")
    animation = g.Animation(name="pfnn-demo", channels=[], samplers=[])
    parents = body.parents
    for k in range(count):
        world = worlds[k]                                              # (T, J, 4, 4)
        local = world.copy()
        inner = np.flatnonzero(parents >= 0)
        local[:, inner] = np.linalg.inv(world[:, parents[inner]]) @ world[:, inner]
        translation, rotation, scale = _decompose(local)
        first = len(document.nodes)
        for j, name in enumerate(body.names):
            children = [int(first + c) for c in np.flatnonzero(parents == j)]
            document.nodes.append(g.Node(name=name if count == 1 else f"{name}_{k}", children=children or None,
                                         translation=translation[0, j].tolist(), rotation=rotation[0, j].tolist(),
                                         scale=scale[0, j].tolist()))
            for path_name, values, kind in (("translation", translation, "VEC3"), ("rotation", rotation, "VEC4"),
                                            ("scale", scale, "VEC3")):
                output = writer.accessor(values[:, j].astype(np.float32), kind)
                animation.samplers.append(g.AnimationSampler(input=times, output=output, interpolation="LINEAR"))
                animation.channels.append(g.AnimationChannel(
                    sampler=len(animation.samplers) - 1, target=g.AnimationChannelTarget(node=first + j, path=path_name)))
        tops = [int(first + j) for j in np.flatnonzero(parents < 0)]
        document.skins.append(g.Skin(joints=list(range(first, first + len(body.names))),
                                     inverseBindMatrices=inverse_binds, skeleton=tops[0]))
        mesh_node = len(document.nodes)
        document.nodes.append(g.Node(name="body" if count == 1 else f"body_{k}", mesh=0,
                                     skin=len(document.skins) - 1))
        document.nodes[0].children = (document.nodes[0].children or []) + tops + [mesh_node]
    document.animations.append(animation)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer.save(path)
    return path
