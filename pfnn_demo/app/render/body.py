"""What a character looks like: a skinned body the renderer draws for every character.

A body turns the canonical skeleton's drawn poses into its own skinning matrices and draws
itself with them (the renderer has uploaded them to the skin texture, one row per character):
the project's capsule mannequin, or a user's glTF rig driven by retargeting.
"""

from __future__ import annotations

import io

import moderngl
import numpy as np

from .character_mesh import (CROWD_RINGS, CROWD_SEGMENTS, RINGS, SEGMENTS, SHADOW_RINGS, SHADOW_SEGMENTS,
                             build_character_mesh, skin_matrices)

MANNEQUIN_ALBEDO = (1.0, 0.9, 0.6)
_FULL_LAYOUT = ("3f 3f 4f 4f", "in_position", "in_normal", "in_joints", "in_weights")
_SHADOW_LAYOUT = ("3f 12x 4f 4f", "in_position", "in_joints", "in_weights")
_RIG_LAYOUT = ("3f 3f 4f 4f 4f 2f", "in_position", "in_normal", "in_joints", "in_weights", "in_colour", "in_texcoord")
_RIG_SHADOW_LAYOUT = ("3f 12x 4f 4f 24x", "in_position", "in_joints", "in_weights")


class MannequinBody:
    """The capsule mannequin: the player in full detail, the crowd coarser, shadows coarser still."""

    name = "mannequin"

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
        self.parts = []      # (vao, shadow vao, texture or None)
        self._objects = []
        groups: dict[int, list] = {}
        for primitive in rig.primitives:
            key = id(primitive.image) if primitive.image is not None and primitive.texcoords is not None else 0
            groups.setdefault(key, []).append(primitive)
        for key, primitives in groups.items():
            texture = self._texture(primitives[0].image) if key else None
            vertices, indices = _interleave(primitives)
            vbo, ibo = ctx.buffer(vertices.tobytes()), ctx.buffer(indices.tobytes())
            vao = ctx.vertex_array(programs.rig, [(vbo,) + _RIG_LAYOUT], ibo, index_element_size=4)
            shadow = ctx.vertex_array(programs.shadow_character, [(vbo,) + _RIG_SHADOW_LAYOUT], ibo,
                                      index_element_size=4)
            self.parts.append((vao, shadow, texture))
            self._objects += [vao, shadow, vbo, ibo] + ([texture] if texture is not None else [])

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

    def draw(self, shadow: bool, first: int, stop: int) -> None:
        program = self.programs.shadow_character if shadow else self.programs.rig
        for vao, shadow_vao, texture in self.parts:
            if not shadow:
                program["textured"].value = texture is not None
                if texture is not None:
                    texture.use(location=3)
                    program["base_texture"].value = 3
            target = shadow_vao if shadow else vao
            program["first_character"].value = 0
            target.render()
            if stop > first:
                program["first_character"].value = first
                target.render(instances=stop - first)

    def release(self) -> None:
        for item in self._objects:       # GPU objects are not freed by garbage collection
            item.release()
        self._objects = []


def _interleave(primitives) -> tuple[np.ndarray, np.ndarray]:
    """One vertex buffer (position, normal, joints, weights, colour, texcoord) and index list."""
    blocks, indices, offset = [], [], 0
    for p in primitives:
        count = len(p.positions)
        colour = np.broadcast_to(np.asarray(p.colour, np.float32), (count, 4))
        texcoords = p.texcoords if p.texcoords is not None else np.zeros((count, 2), np.float32)
        blocks.append(np.concatenate([p.positions, p.normals, p.joints.astype(np.float32), p.weights, colour,
                                      texcoords], axis=1).astype(np.float32))
        indices.append(p.indices.astype(np.uint32) + offset)
        offset += count
    return np.concatenate(blocks), np.concatenate(indices)
