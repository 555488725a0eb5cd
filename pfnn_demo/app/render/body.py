"""What a character looks like: a skinned body the renderer draws for every character.

A body turns the canonical skeleton's drawn poses into its own skinning matrices and draws
itself with them (the renderer has uploaded them to the skin texture, one row per character):
the project's capsule mannequin, or a user's glTF rig driven by retargeting.
"""

from __future__ import annotations

import io

import moderngl
import numpy as np

from ...character.rig import smooth_normals
from .character_mesh import (CROWD_RINGS, CROWD_SEGMENTS, MANNEQUIN_ALBEDO, RINGS, SEGMENTS, SHADOW_RINGS,
                             SHADOW_SEGMENTS, build_character_mesh, skin_matrices, sort_influences)

_FULL_LAYOUT = ("3f 3f 4f 4f", "in_position", "in_normal", "in_joints", "in_weights")
_SHADOW_LAYOUT = ("3f 12x 4f 4f", "in_position", "in_joints", "in_weights")
_RIG_LAYOUT = ("3f 3f 4f 4f 4f 2f", "in_position", "in_normal", "in_joints", "in_weights", "in_colour", "in_texcoord")
_RIG_SHADOW_LAYOUT = ("3f 12x 4f 4f 24x", "in_position", "in_joints", "in_weights")
CROWD_CELLS, SHADOW_CELLS = 20, 10     # a rig's height over the cell size of its crowd's and shadows' meshes


class MannequinBody:
    """The capsule mannequin: the player in full detail, the crowd coarser, shadows coarser still."""

    name = "mannequin"
    radius = 110.0    # units: a sphere about the hips that holds the body in any pose (culling)

    def __init__(self, ctx: moderngl.Context, programs):
        self.programs = programs
        self.vaos, self.shadow_vaos = [], []
        for (rings, segments), vaos, program, layout in (
                ((RINGS, SEGMENTS), self.vaos, programs.character, _FULL_LAYOUT),
                ((CROWD_RINGS, CROWD_SEGMENTS), self.vaos, programs.character, _FULL_LAYOUT),
                ((RINGS, SEGMENTS), self.shadow_vaos, programs.shadow_character, _SHADOW_LAYOUT),
                ((SHADOW_RINGS, SHADOW_SEGMENTS), self.shadow_vaos, programs.shadow_character, _SHADOW_LAYOUT)):
            vertices, indices = build_character_mesh(rings, segments)
            vbo, ibo = ctx.buffer(vertices.tobytes()), ctx.buffer(indices.tobytes())
            vaos.append(ctx.vertex_array(program, [(vbo,) + layout], ibo, index_element_size=4))

    @property
    def colour_programs(self):
        return [self.programs.character]

    def skins(self, drawn: np.ndarray, ground=None) -> np.ndarray:
        return skin_matrices(drawn)

    def export_body(self, ground=None):
        """What a .glb recording animates: None, the mannequin (motion.gltf_export's default)."""
        return None

    def draw(self, shadow: bool, first: int, stop: int) -> None:
        """The player (row 0 of the skin texture), then rows first ... stop-1 in one instanced draw."""
        program = self.programs.shadow_character if shadow else self.programs.character
        vaos = self.shadow_vaos if shadow else self.vaos
        if not shadow:
            program["albedo"].value = MANNEQUIN_ALBEDO
        program["first_character"].value = 0
        vaos[0].render()
        if stop > first:
            program["first_character"].value = first
            vaos[1].render(instances=stop - first)

    def release(self) -> None:
        pass     # lives as long as the renderer


class RigBody:
    """A user's glTF rig (character.Rig) posed by a character.Retargeter, drawn with its
    materials' base colours and textures; one draw per textured part, the rest in one."""

    def __init__(self, ctx: moderngl.Context, programs, rig, retargeter, name: str):
        self.ctx, self.programs, self.rig, self.retargeter, self.name = ctx, programs, rig, retargeter, name
        self.parts = []      # (player's vao, crowd's vao, player's shadow vao, crowd's shadow vao, texture)
        self._objects = []
        heights = [p.positions[:, 1] for p in rig.primitives]
        height = max(float(np.ptp(np.concatenate(heights))), 1e-3) if heights else 1.0
        # A sphere about the hips that holds the drawn body in any pose: its bind pose's reach
        # from the hips, drawn at the retargeting's scale, with room for a raised arm.
        hips = rig.bind_world()[retargeter.hips, :3, 3]
        reach = max(float(np.linalg.norm(p.positions - hips, axis=1).max()) for p in rig.primitives)
        self.radius = 1.25 * reach * retargeter.scale
        groups: dict[int, list] = {}
        for primitive in rig.primitives:
            key = id(primitive.image) if primitive.image is not None and primitive.texcoords is not None else 0
            groups.setdefault(key, []).append(primitive)
        for key, primitives in groups.items():
            texture = self._texture(primitives[0].image) if key else None
            full = _interleave(primitives)
            # The crowd gets about a fifth of a detailed rig's vertices, its shadows fewer still.
            meshes = (full, simplified(*full, height / CROWD_CELLS), simplified(*full, height / SHADOW_CELLS))
            buffers = [(ctx.buffer(v.tobytes()), ctx.buffer(i.tobytes())) for v, i in meshes]
            vao, crowd_vao = (ctx.vertex_array(programs.rig, [(vbo,) + _RIG_LAYOUT], ibo, index_element_size=4)
                              for vbo, ibo in buffers[:2])
            shadow, crowd_shadow = (ctx.vertex_array(programs.shadow_character, [(vbo,) + _RIG_SHADOW_LAYOUT], ibo,
                                                     index_element_size=4) for vbo, ibo in (buffers[0], buffers[2]))
            self.parts.append((vao, crowd_vao, shadow, crowd_shadow, texture))
            self._objects += [vao, crowd_vao, shadow, crowd_shadow] + [b for pair in buffers for b in pair] \
                + ([texture] if texture is not None else [])

    def _texture(self, image: bytes):
        import pygame     # decoding PNG and JPEG; the window has pygame anyway

        try:
            surface = pygame.image.load(io.BytesIO(image))
        except pygame.error:
            return None                      # an unreadable texture: the base colour alone
        # glTF's texture coordinates start at the image's top row, as pygame's bytes do.
        texture = self.ctx.texture(surface.get_size(), 4, pygame.image.tobytes(surface, "RGBA"))
        texture.build_mipmaps()
        texture.repeat_x = texture.repeat_y = True
        return texture

    @property
    def colour_programs(self):
        return [self.programs.rig]

    def skins(self, drawn: np.ndarray, ground=None) -> np.ndarray:
        return self.rig.skin_matrices(self.retargeter(drawn, ground))

    def export_body(self, ground=None):
        """What a .glb recording animates: this rig (motion.gltf_export.rig_body)."""
        from ...motion.gltf_export import rig_body

        return rig_body(self.rig, self.retargeter, ground)

    def draw(self, shadow: bool, first: int, stop: int) -> None:
        program = self.programs.shadow_character if shadow else self.programs.rig
        for vao, crowd_vao, shadow_vao, crowd_shadow_vao, texture in self.parts:
            if not shadow:
                program["textured"].value = texture is not None
                if texture is not None:
                    texture.use(location=3)
                    program["base_texture"].value = 3
            program["first_character"].value = 0
            (shadow_vao if shadow else vao).render()
            if stop > first:
                program["first_character"].value = first
                (crowd_shadow_vao if shadow else crowd_vao).render(instances=stop - first)

    def release(self) -> None:
        for item in self._objects:       # GPU objects are not freed by garbage collection
            item.release()
        self._objects = []


def simplified(vertices: np.ndarray, indices: np.ndarray, cell: float) -> tuple[np.ndarray, np.ndarray]:
    """A coarser copy of an interleaved mesh (rows: position, normal, joints, weights, ...) by
    vertex clustering: vertices in one `cell`-sized cube that share their main joint and their
    colour become one (their mean position, smooth normals), triangles that collapse go. The
    crowd and the shadows are drawn with it: in software rendering a crowd's cost is its vertices."""
    if len(vertices) == 0:
        return vertices, indices
    cells = np.floor(vertices[:, :3] / cell).astype(np.int64)
    keys = np.concatenate([cells, vertices[:, 6:7].astype(np.int64), np.round(vertices[:, 14:18] * 255).astype(np.int64)
                           if vertices.shape[1] >= 18 else np.zeros((len(vertices), 0), np.int64)], axis=1)
    _, first, cluster = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    cluster = cluster.ravel()
    counts = np.bincount(cluster).astype(np.float64)
    merged = vertices[first].copy()
    for axis in range(3):
        merged[:, axis] = np.bincount(cluster, vertices[:, axis]) / counts
    triangles = cluster[indices.reshape(-1, 3)]
    keep = (triangles[:, 0] != triangles[:, 1]) & (triangles[:, 1] != triangles[:, 2]) & (triangles[:, 0] != triangles[:, 2])
    triangles = triangles[keep]
    normals = smooth_normals(merged[:, :3], triangles)
    used = np.linalg.norm(normals, axis=1, keepdims=True) > 0.5      # vertices left in no triangle keep theirs
    merged[:, 3:6] = np.where(used, normals, merged[:, 3:6])
    return merged.astype(np.float32), triangles.astype(np.uint32).ravel()


def _interleave(primitives) -> tuple[np.ndarray, np.ndarray]:
    """One vertex buffer (position, normal, joints, weights, colour, texcoord) and index list."""
    blocks, indices, offset = [], [], 0
    for p in primitives:
        count = len(p.positions)
        colour = np.broadcast_to(np.asarray(p.colour, np.float32), (count, 4))     # linear, as glTF's
        texcoords = p.texcoords if p.texcoords is not None else np.zeros((count, 2), np.float32)
        joints, weights = sort_influences(p.joints.astype(np.float32), p.weights)
        blocks.append(np.concatenate([p.positions, p.normals, joints, weights, colour, texcoords],
                                     axis=1).astype(np.float32))
        indices.append(p.indices.astype(np.uint32) + offset)
        offset += count
    return np.concatenate(blocks), np.concatenate(indices)
