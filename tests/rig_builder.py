"""Humanoid glTF rigs built for the tests: other names, proportions, bind poses and local axes.

Each rig is the canonical skeleton's rest pose (T-pose) reshaped: limbs stretched or shortened,
the arms lowered into an A-pose, every joint given a random bind orientation (so that no
joint's local axes agree with the canonical ones), optionally authored in centimetres with a
Z-up root matrix, or with the feet hung from a root joint as IK rigs do. Each bone gets a box
skinned to it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pygltflib

from pfnn_demo.sim.skeleton import JOINT_NAMES, rest_pose_globals

# Template joint -> (parent, where it is on the canonical rest pose).
TEMPLATE = {
    "root": (None, None), "hips": ("root", "Hips"), "spine": ("hips", "Spine"), "chest": ("spine", "Spine1"),
    "neck": ("chest", "Neck1"), "head": ("neck", "Head"),
    "l_shoulder": ("chest", "LeftShoulder"), "l_arm": ("l_shoulder", "LeftArm"), "l_forearm": ("l_arm", "LeftForeArm"),
    "l_hand": ("l_forearm", "LeftHand"), "r_shoulder": ("chest", "RightShoulder"), "r_arm": ("r_shoulder", "RightArm"),
    "r_forearm": ("r_arm", "RightForeArm"), "r_hand": ("r_forearm", "RightHand"),
    "l_upleg": ("hips", "LeftUpLeg"), "l_leg": ("l_upleg", "LeftLeg"), "l_foot": ("l_leg", "LeftFoot"),
    "l_toe": ("l_foot", "LeftToeBase"), "r_upleg": ("hips", "RightUpLeg"), "r_leg": ("r_upleg", "RightLeg"),
    "r_foot": ("r_leg", "RightFoot"), "r_toe": ("r_foot", "RightToeBase"),
}
MIXAMO = {key: "mixamorig:" + name for key, name in {
    "root": "Root", "hips": "Hips", "spine": "Spine", "chest": "Spine2", "neck": "Neck", "head": "Head",
    "l_shoulder": "LeftShoulder", "l_arm": "LeftArm", "l_forearm": "LeftForeArm", "l_hand": "LeftHand",
    "r_shoulder": "RightShoulder", "r_arm": "RightArm", "r_forearm": "RightForeArm", "r_hand": "RightHand",
    "l_upleg": "LeftUpLeg", "l_leg": "LeftLeg", "l_foot": "LeftFoot", "l_toe": "LeftToeBase",
    "r_upleg": "RightUpLeg", "r_leg": "RightLeg", "r_foot": "RightFoot", "r_toe": "RightToeBase"}.items()}
UNREAL = {"root": "root", "hips": "pelvis", "spine": "spine_01", "chest": "spine_03", "neck": "neck_01",
          "head": "head", "l_shoulder": "clavicle_l", "l_arm": "upperarm_l", "l_forearm": "lowerarm_l",
          "l_hand": "hand_l", "r_shoulder": "clavicle_r", "r_arm": "upperarm_r", "r_forearm": "lowerarm_r",
          "r_hand": "hand_r", "l_upleg": "thigh_l", "l_leg": "calf_l", "l_foot": "foot_l", "l_toe": "ball_l",
          "r_upleg": "thigh_r", "r_leg": "calf_r", "r_foot": "foot_r", "r_toe": "ball_r"}
BLENDER = {key: name for key, name in {
    "root": "Armature", "hips": "Hips", "spine": "Spine", "chest": "Chest", "neck": "Neck", "head": "Head",
    "l_shoulder": "Shoulder.L", "l_arm": "UpperArm.L", "l_forearm": "LowerArm.L", "l_hand": "Hand.L",
    "r_shoulder": "Shoulder.R", "r_arm": "UpperArm.R", "r_forearm": "LowerArm.R", "r_hand": "Hand.R",
    "l_upleg": "UpperLeg.L", "l_leg": "LowerLeg.L", "l_foot": "Foot.L", "l_toe": "Toes.L",
    "r_upleg": "UpperLeg.R", "r_leg": "LowerLeg.R", "r_foot": "Foot.R", "r_toe": "Toes.R"}.items()}
# The joint each template joint stands for in the canonical skeleton (what a test compares).
CANONICAL = {key: where for key, (_, where) in TEMPLATE.items() if where is not None}


def _rotation(axis, angle: float) -> np.ndarray:
    axis = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    x, y, z = axis
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
                     [y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s],
                     [z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c)]])


def bind_positions(legs: float = 1.0, arms: float = 1.0, trunk: float = 1.0, a_pose: float = 0.0) -> dict:
    """Template joint -> bind position (metres, y up) from the canonical rest pose reshaped."""
    rest = rest_pose_globals().astype(np.float64) / 100.0
    at = {name: rest[i] for i, name in enumerate(JOINT_NAMES)}
    positions = {"root": np.array([at["Hips"][0], 0.0, at["Hips"][2]])}
    scale = {"leg": legs, "arm": arms}
    for key, (parent, where) in TEMPLATE.items():
        if parent is None:
            continue
        offset = at[where] - at[TEMPLATE[parent][1]] if TEMPLATE[parent][1] else at[where] - positions["root"]
        if key in ("l_shoulder", "r_shoulder"):      # canonical shoulders sit on the chest: move them out
            offset = 0.4 * (at[where.replace("Shoulder", "Arm")] - at["Spine1"])
        if key in ("l_arm", "r_arm"):
            offset = 0.6 * (at[where] - at["Spine1"])
        part = "leg" if key[2:] in ("upleg", "leg", "foot", "toe") else "arm" if key[2:] in ("arm", "forearm", "hand") else "trunk"
        if key == "hips":
            offset = offset * legs                  # the hips stand on the legs
        elif part == "trunk":
            offset = offset * trunk
        elif key[2:] != "upleg":
            offset = offset * scale[part]
        positions[key] = positions[parent] + offset
    for side, sign in (("l", -1.0), ("r", 1.0)):     # arms down into an A-pose about the shoulder
        turn = _rotation([0, 0, 1], sign * a_pose)
        pivot = positions[f"{side}_arm"]
        for part in ("forearm", "hand"):
            positions[f"{side}_{part}"] = pivot + turn @ (positions[f"{side}_{part}"] - pivot)
    return positions


def build_rig(path: Path, names: dict, legs: float = 1.0, arms: float = 1.0, trunk: float = 1.0,
              a_pose: float = 0.0, seed: int = 0, z_up_centimetres: bool = False, feet_from_root: bool = False,
              texture: bytes | None = None, two_skins: bool = False) -> Path:
    """Write a skinned humanoid (.glb, or .gltf with an external .bin); returns the path.
    `texture`: a PNG as the base colour texture (white factor); `two_skins`: the legs a second
    mesh with a second skin over the same joints, listed in reverse order."""
    rng = np.random.default_rng(seed)
    positions = bind_positions(legs, arms, trunk, a_pose)
    keys = list(TEMPLATE)
    parents = {key: TEMPLATE[key][0] for key in keys}
    if feet_from_root:
        parents["l_foot"] = parents["r_foot"] = "root"
    world = {}
    for key in keys:
        matrix = np.eye(4)
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        w, x, y, z = q                          # a random bind orientation for every joint
        matrix[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                          [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                          [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
        matrix[:3, 3] = positions[key]
        world[key] = matrix
    above = np.eye(4)
    if z_up_centimetres:     # authored in centimetres with z up; the root node turns it to metres, y up
        above[:3, :3] = _rotation([1, 0, 0], -np.pi / 2) * 0.01
    nodes, index = [], {key: i for i, key in enumerate(keys)}
    for key in keys:
        parent_world = world[parents[key]] if parents[key] else above
        local = np.linalg.inv(parent_world) @ world[key]
        children = [index[c] for c in keys if parents[c] == key]
        nodes.append(pygltflib.Node(name=names[key], matrix=local.T.ravel().tolist(), children=children or None))
    # A box along every bone, skinned to the bone's joint; a flat box under each foot.
    vertices, joints, triangles = [], [], []
    cube = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], np.float64)
    faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                      [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    for key in keys:
        children = [c for c in keys if TEMPLATE[c][0] == key]
        for child in children:
            a, b = positions[key], positions[child]
            low, high = np.minimum(a, b) - 0.02, np.maximum(a, b) + 0.02
            triangles.append(faces + len(vertices) * 0 + sum(len(v) for v in vertices))
            vertices.append(low + cube * (high - low))
            joints.append(np.full(8, index[key]))
        if key in ("l_foot", "r_foot"):
            toe = positions[key.replace("foot", "toe")]
            sole = positions[key][1] - 0.05 * legs        # the ankle 5 cm above the sole, scaled
            low = np.array([positions[key][0] - 0.04, sole, positions[key][2] - 0.05])
            high = np.array([positions[key][0] + 0.04, sole + 0.03, toe[2] + 0.03])
            triangles.append(faces + sum(len(v) for v in vertices))
            vertices.append(low + cube * (high - low))
            joints.append(np.full(8, index[key]))
    vertices = np.concatenate(vertices).astype(np.float32)
    joint_indices = np.zeros((len(vertices), 4), np.uint16)
    joint_indices[:, 0] = np.concatenate(joints)
    weights = np.zeros((len(vertices), 4), np.float32)
    weights[:, 0] = 1.0
    indices = np.concatenate(triangles).astype(np.uint32).ravel()
    # Skinned vertices live in world space (the root node's turn included).
    file_vertices = vertices
    inverse_binds = np.stack([np.linalg.inv(world[key]) for key in keys]).astype(np.float32)
    blob = bytearray()
    views, accessors = [], []

    def add(array, kind, component, bounds=False):
        data = np.ascontiguousarray(array).tobytes()
        while len(blob) % 4:
            blob.append(0)
        views.append(pygltflib.BufferView(buffer=0, byteOffset=len(blob), byteLength=len(data)))
        blob.extend(data)
        accessor = pygltflib.Accessor(bufferView=len(views) - 1, componentType=component, count=len(array), type=kind)
        if bounds:
            accessor.min, accessor.max = np.min(array, 0).tolist(), np.max(array, 0).tolist()
        accessors.append(accessor)
        return len(accessors) - 1

    texcoords = np.stack([(file_vertices[:, 0] * 3) % 1, (file_vertices[:, 1] * 3) % 1], axis=1).astype(np.float32)
    triangles_all = indices.reshape(-1, 3)
    legs = np.isin(joint_indices[:, 0], [index[k] for k in keys if k[2:] in ("upleg", "leg", "foot", "toe")])
    parts = [np.ones(len(triangles_all), bool)] if not two_skins else \
        [~legs[triangles_all[:, 0]], legs[triangles_all[:, 0]]]
    meshes, skins = [], []
    ibm = add(np.swapaxes(inverse_binds, 1, 2).reshape(-1, 16), "MAT4", 5126)
    reverse = np.arange(len(keys))[::-1]
    ibm_reversed = add(np.swapaxes(inverse_binds[reverse], 1, 2).reshape(-1, 16), "MAT4", 5126)
    for k, chosen in enumerate(parts):
        local_joints = joint_indices if k == 0 else np.argsort(reverse)[joint_indices].astype(np.uint16)
        attributes = pygltflib.Attributes(POSITION=add(file_vertices, "VEC3", 5126, True),
                                          JOINTS_0=add(local_joints, "VEC4", 5123), WEIGHTS_0=add(weights, "VEC4", 5126),
                                          TEXCOORD_0=add(texcoords, "VEC2", 5126) if texture else None)
        meshes.append(pygltflib.Mesh(primitives=[pygltflib.Primitive(
            attributes=attributes, indices=add(triangles_all[chosen].reshape(-1, 1).astype(np.uint32), "SCALAR", 5125),
            material=0)]))
        skins.append(pygltflib.Skin(joints=list(range(len(keys))) if k == 0 else reverse.tolist(),
                                    inverseBindMatrices=ibm if k == 0 else ibm_reversed))
    material = pygltflib.Material(pbrMetallicRoughness=pygltflib.PbrMetallicRoughness(
        baseColorFactor=[1.0, 1.0, 1.0, 1.0] if texture else [0.2, 0.4, 0.9, 1.0]))
    images, textures = [], []
    if texture:
        while len(blob) % 4:
            blob.append(0)
        views.append(pygltflib.BufferView(buffer=0, byteOffset=len(blob), byteLength=len(texture)))
        blob.extend(texture)
        images.append(pygltflib.Image(bufferView=len(views) - 1, mimeType="image/png"))
        textures.append(pygltflib.Texture(source=0))
        material.pbrMetallicRoughness.baseColorTexture = pygltflib.TextureInfo(index=0)
    scene_root = len(nodes)
    body_nodes = list(range(scene_root + 1, scene_root + 1 + len(meshes)))
    nodes.append(pygltflib.Node(name="Character", children=[index["root"]] + body_nodes,
                                matrix=above.T.ravel().tolist() if z_up_centimetres else None))
    for k in range(len(meshes)):
        nodes.append(pygltflib.Node(name=f"Body{k}", mesh=k, skin=k))
    document = pygltflib.GLTF2(
        scene=0, scenes=[pygltflib.Scene(nodes=[scene_root])], nodes=nodes, meshes=meshes, skins=skins,
        materials=[material], images=images, textures=textures, accessors=accessors, bufferViews=views)
    path = Path(path)
    if path.suffix == ".glb":
        document.buffers = [pygltflib.Buffer(byteLength=len(blob))]
        document.set_binary_blob(bytes(blob))
        path.write_bytes(b"".join(document.save_to_bytes()))
    else:
        bin_path = path.with_suffix(".bin")
        bin_path.write_bytes(bytes(blob))
        document.buffers = [pygltflib.Buffer(byteLength=len(blob), uri=bin_path.name)]
        path.write_text(document.gltf_to_json())
    return path
