"""glTF 2.0 (.glb, or .gltf with external or embedded buffers) into a `Rig`, through pygltflib.

pygltflib parses the document and the binary chunk; the accessors, node transforms and skins
are read here with NumPy. Morph targets and animations are ignored.
"""

from __future__ import annotations

import base64
import warnings
from pathlib import Path
from urllib.parse import unquote

import numpy as np

from .rig import UNITS_PER_METRE, CharacterError, Primitive, Rig, smooth_normals

_COMPONENTS = {5120: np.int8, 5121: np.uint8, 5122: np.int16, 5123: np.uint16, 5125: np.uint32, 5126: np.float32}
_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_NORMALISED_SCALE = {np.int8: 127.0, np.uint8: 255.0, np.int16: 32767.0, np.uint16: 65535.0}
TRIANGLES = 4


def _open(path: Path):
    import pygltflib

    if not path.is_file():
        raise CharacterError("no such file", path)
    with open(path, "rb") as handle:
        header = handle.read(12)
    magic = header[:4]
    if magic == b"glTF":
        version = int.from_bytes(header[4:8], "little") if len(header) >= 8 else 0
        if version != 2:
            raise CharacterError(f"not a glTF 2.0 file (a binary glTF header of version {version})", path)
    try:
        with warnings.catch_warnings():        # pygltflib warns where we raise one clear error
            warnings.simplefilter("ignore")
            if magic == b"glTF":
                document = pygltflib.GLTF2().load_binary(str(path))
            else:
                document = pygltflib.GLTF2().load_json(str(path))
    except Exception as error:   # pygltflib raises whatever its JSON and struct parsing raise
        raise CharacterError(f"not a glTF 2.0 file ({type(error).__name__}: {str(error)[:80]})", path) from None
    if document is None or not str(getattr(document.asset, "version", "2.0")).startswith("2"):
        raise CharacterError("not a glTF 2.0 file", path)
    return document


class _Buffers:
    """The bytes of each buffer: the GLB's binary chunk, a data URI, or a file beside the document."""

    def __init__(self, document, path: Path):
        self.document, self.path, self._cache = document, path, {}

    def buffer(self, index: int) -> bytes:
        if index not in self._cache:
            uri = self.document.buffers[index].uri
            if uri is None:
                data = self.document.binary_blob()
            elif uri.startswith("data:"):
                data = base64.b64decode(uri.split(",", 1)[1])
            else:
                file = self.path.parent / unquote(uri)
                if not file.is_file():
                    raise CharacterError(f"buffer {index} names {uri}, which is not beside it", self.path)
                data = file.read_bytes()
            if data is None:
                raise CharacterError(f"buffer {index} has no data", self.path)
            self._cache[index] = data
        return self._cache[index]

    def view(self, index: int) -> tuple[bytes, int, int | None]:
        view = self.document.bufferViews[index]
        return self.buffer(view.buffer), view.byteOffset or 0, view.byteStride

    def accessor(self, index: int) -> np.ndarray:
        """An accessor as a (count, width) array (float32 for normalised integers)."""
        accessor = self.document.accessors[index]
        dtype = np.dtype(_COMPONENTS[accessor.componentType])
        width = _WIDTHS[accessor.type]
        if accessor.bufferView is None:
            values = np.zeros((accessor.count, width), dtype)
        else:
            data, offset, stride = self.view(accessor.bufferView)
            offset += accessor.byteOffset or 0
            item = dtype.itemsize * width
            stride = stride or item
            try:
                raw = np.ndarray((accessor.count, width), dtype, data, offset, (stride, dtype.itemsize))
            except TypeError:
                raise CharacterError(f"accessor {index} reaches past the end of its buffer", self.path) from None
            values = raw.copy()
        sparse = accessor.sparse
        if sparse is not None and sparse.count:
            idx_data, idx_offset, _ = self.view(sparse.indices.bufferView)
            positions = np.frombuffer(idx_data, _COMPONENTS[sparse.indices.componentType], sparse.count,
                                      idx_offset + (sparse.indices.byteOffset or 0))
            val_data, val_offset, _ = self.view(sparse.values.bufferView)
            values[positions] = np.frombuffer(val_data, dtype, sparse.count * width,
                                              val_offset + (sparse.values.byteOffset or 0)).reshape(-1, width)
        if accessor.normalized and dtype.type in _NORMALISED_SCALE:
            values = np.maximum(values.astype(np.float32) / _NORMALISED_SCALE[dtype.type], -1.0)
        return values

    def image(self, index: int) -> bytes | None:
        image = self.document.images[index]
        if image.bufferView is not None:
            data, offset, _ = self.view(image.bufferView)
            return data[offset: offset + self.document.bufferViews[image.bufferView].byteLength]
        if image.uri:
            if image.uri.startswith("data:"):
                return base64.b64decode(image.uri.split(",", 1)[1])
            file = self.path.parent / unquote(image.uri)
            return file.read_bytes() if file.is_file() else None
        return None


def _local_matrix(node) -> np.ndarray:
    if node.matrix is not None and len(node.matrix) == 16:
        return np.array(node.matrix, np.float64).reshape(4, 4).T     # glTF matrices are column-major
    x, y, z, w = node.rotation if node.rotation is not None else (0.0, 0.0, 0.0, 1.0)
    norm = max(np.sqrt(x * x + y * y + z * z + w * w), 1e-12)
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    rotation = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    matrix = np.eye(4)
    matrix[:3, :3] = rotation * np.asarray(node.scale if node.scale is not None else (1, 1, 1), np.float64)
    matrix[:3, 3] = node.translation if node.translation is not None else (0, 0, 0)
    return matrix


def _node_worlds(document, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Every node's parent (-1 at a root) and its world matrix in the rest pose (metres)."""
    count = len(document.nodes)
    parents = np.full(count, -1, np.int64)
    for index, node in enumerate(document.nodes):
        for child in node.children or []:
            if not 0 <= child < count or parents[child] >= 0 or child == index:
                raise CharacterError(f"node {index} has a child {child} that is not a tree node", path)
            parents[child] = index
    local = np.stack([_local_matrix(node) for node in document.nodes]) if count else np.zeros((0, 4, 4))
    world = np.empty_like(local)
    done = np.zeros(count, bool)

    def resolve(index: int) -> np.ndarray:
        chain = []
        while index >= 0 and not done[index]:
            chain.append(index)
            index = parents[index]
            if len(chain) > count:
                raise CharacterError("the node hierarchy has a cycle", path)
        above = np.eye(4) if index < 0 else world[index]
        for node in reversed(chain):
            above = world[node] = above @ local[node]
            done[node] = True
        return above

    for index in range(count):
        resolve(index)
    return parents, world


def _joint_order(skin_joints: list[int], node_parents: np.ndarray) -> tuple[list[int], np.ndarray]:
    """The skins' joints, parents first, and each joint's parent among them (-1 if none)."""
    joints = set(skin_joints)

    def depth(node):
        d = 0
        while node_parents[node] >= 0:
            node, d = node_parents[node], d + 1
        return d

    order = sorted(joints, key=lambda node: (depth(node), skin_joints.index(node)))
    position = {node: i for i, node in enumerate(order)}
    parents = []
    for node in order:
        parent = node_parents[node]
        while parent >= 0 and parent not in joints:
            parent = node_parents[parent]
        parents.append(position[parent] if parent >= 0 else -1)
    return order, np.array(parents, np.int32)


def _material(document, buffers: _Buffers, index: int | None) -> tuple[tuple, bytes | None]:
    if index is None or not document.materials:
        return (0.8, 0.8, 0.8, 1.0), None
    pbr = document.materials[index].pbrMetallicRoughness
    colour = tuple(float(v) for v in (pbr.baseColorFactor if pbr and pbr.baseColorFactor else (1, 1, 1, 1)))
    image = None
    if pbr is not None and pbr.baseColorTexture is not None:
        texture = document.textures[pbr.baseColorTexture.index]
        if texture.source is not None:
            image = buffers.image(texture.source)
    return colour, image


def read_rig(path: Path) -> Rig:
    document = _open(path)
    if not document.skins:
        raise CharacterError("the file holds no skin (no skeleton to drive)", path)
    buffers = _Buffers(document, path)
    node_parents, node_world = _node_worlds(document, path)
    skin_joints = [j for skin in document.skins for j in skin.joints]
    if any(not 0 <= j < len(document.nodes) for j in skin_joints):
        raise CharacterError("a skin names a joint node that does not exist", path)
    order, parents = _joint_order(list(dict.fromkeys(skin_joints)), node_parents)
    index_of = {node: i for i, node in enumerate(order)}
    units = np.diag([UNITS_PER_METRE] * 3 + [1.0])
    units_inverse = np.linalg.inv(units)

    world = node_world[order]
    bind_local = world.copy()
    inner = np.flatnonzero(parents >= 0)
    bind_local[inner] = np.linalg.inv(world[parents[inner]]) @ world[inner]
    world_units = units @ world
    inverse_binds = np.linalg.inv(world_units)
    seen = set()
    for skin in document.skins:
        if skin.inverseBindMatrices is None:
            continue
        matrices = buffers.accessor(skin.inverseBindMatrices).reshape(-1, 4, 4).transpose(0, 2, 1)
        for k, node in enumerate(skin.joints[:len(matrices)]):
            if node not in seen:          # several skins over one skeleton: the first one's bind
                inverse_binds[index_of[node]] = matrices[k].astype(np.float64) @ units_inverse
                seen.add(node)

    primitives = []
    scene_nodes = _scene_nodes(document, node_parents)
    for node_index in scene_nodes:
        node = document.nodes[node_index]
        if node.mesh is None:
            continue
        for primitive in document.meshes[node.mesh].primitives:
            built = _primitive(document, buffers, primitive, node, node_index, node_parents, node_world,
                               index_of, inverse_binds, units, path)
            if built is not None:
                primitives.append(built)
    if not primitives:
        raise CharacterError("the file holds no triangle mesh to draw", path)
    names = [document.nodes[node].name or f"node{node}" for node in order]
    return Rig(path, names, parents, bind_local, units, inverse_binds, primitives, list(order))


def _scene_nodes(document, node_parents) -> list[int]:
    """The nodes of the default scene (all nodes if the file names no scene)."""
    if not document.scenes:
        return list(range(len(document.nodes)))
    roots = document.scenes[document.scene or 0].nodes or []
    stack, found = list(roots), []
    while stack:
        index = stack.pop()
        found.append(index)
        stack.extend(document.nodes[index].children or [])
    return sorted(found)


def _primitive(document, buffers, primitive, node, node_index, node_parents, node_world, index_of,
               inverse_binds, units, path) -> Primitive | None:
    if (primitive.mode if primitive.mode is not None else TRIANGLES) != TRIANGLES:
        return None
    attributes = primitive.attributes
    if attributes.POSITION is None:
        return None
    positions = buffers.accessor(attributes.POSITION).astype(np.float64)
    count = len(positions)
    if primitive.indices is not None:
        indices = buffers.accessor(primitive.indices).astype(np.int64).ravel()
    else:
        indices = np.arange(count)
    if len(indices) % 3 or (len(indices) and (indices.max() >= count or indices.min() < 0)):
        raise CharacterError(f"mesh {node.mesh} has triangle indices outside its vertices", path)
    normals = (buffers.accessor(attributes.NORMAL).astype(np.float64) if attributes.NORMAL is not None
               else None)
    skinned = node.skin is not None and attributes.JOINTS_0 is not None and attributes.WEIGHTS_0 is not None
    if skinned:
        skin_joints = document.skins[node.skin].joints
        local_joints = buffers.accessor(attributes.JOINTS_0).astype(np.int64)
        if local_joints.max(initial=0) >= len(skin_joints):
            raise CharacterError(f"mesh {node.mesh} names joint {local_joints.max()} of a skin of "
                                 f"{len(skin_joints)}", path)
        joints = np.asarray([index_of[j] for j in skin_joints])[local_joints]
        weights = buffers.accessor(attributes.WEIGHTS_0).astype(np.float64)
        transform = units                                  # skinned vertices are in bind-world space
    else:
        # A mesh hung on a joint moves rigidly with it; one outside the skeleton with the top joint.
        anchor = node_index
        while anchor >= 0 and anchor not in index_of:
            anchor = node_parents[anchor]
        joint = index_of[anchor] if anchor >= 0 else 0
        joints = np.full((count, 4), joint)
        weights = np.zeros((count, 4))
        weights[:, 0] = 1.0
        # Expressed in the joint's bind space, then out through its inverse bind matrix.
        joint_world = units @ node_world[anchor] if anchor >= 0 else np.linalg.inv(inverse_binds[joint])
        transform = np.linalg.inv(inverse_binds[joint]) @ np.linalg.inv(joint_world) @ units @ node_world[node_index]
    positions = positions @ transform[:3, :3].T + transform[:3, 3]
    triangles = indices.reshape(-1, 3)
    if np.linalg.det(transform[:3, :3]) < 0:          # a mirroring transform turns the winding round
        triangles = triangles[:, ::-1]
    if normals is not None:
        normals = normals @ np.linalg.inv(transform[:3, :3])
        normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
    else:
        normals = smooth_normals(positions, triangles)
    totals = weights.sum(axis=1, keepdims=True)
    weights = np.where(totals > 1e-6, weights / np.maximum(totals, 1e-12), np.array([1.0, 0, 0, 0]))
    colour, image = _material(document, buffers, primitive.material)
    texcoords = None
    if image is not None and attributes.TEXCOORD_0 is not None:
        texcoords = buffers.accessor(attributes.TEXCOORD_0).astype(np.float32)
    else:
        image = None
    return Primitive(positions.astype(np.float32), normals.astype(np.float32), joints.astype(np.int32),
                     weights.astype(np.float32), triangles.astype(np.uint32).ravel(), colour, texcoords, image)
