"""Draws one frame of the simulation with moderngl: shadow pass, terrain, character, debug, overlays.

Works on any moderngl context: a window's, or a standalone EGL one for offscreen pictures.
"""

from __future__ import annotations

import dataclasses
import math
import re
from types import SimpleNamespace

import moderngl
import numpy as np
from pyglm import glm

from ...resources import data_dir
from ...sim.skeleton import CONTACT_JOINTS
from .body import MannequinBody
from .debug_geometry import debug_geometry, skeleton_geometry
from . import lighting
from .terrain_mesh import TerrainMesh

# degrees: the original's perspective(45) read as radians (original-demo.md: Camera)
VERTICAL_FOV = 58.31
NEAR, FAR = 10.0, 10000.0
LIGHT_OFFSET = glm.vec3(*lighting.LIGHT_OFFSET)
SHADOW_EXTENT = 200.0         # half-size of the light's view around the character
CROWD_SHADOW_EXTENT = 600.0   # ... around the player when others are drawn: their shadows fall in it too
SHADOW_SIZE = 1024
# 1.2 units a texel: about a pixel at the crowd's usual distances, softer for a close-up; in
# software rendering the crowd's shadow pass costs its texels (2048 took 8 ms more a picture).
CROWD_SHADOW_SIZE = 1024
SHADOW_REACH = 190.0          # the character's shadow ends within this of its hips, away from the light
NEAR_RADIUS = 75.0            # ... and within this of the line from the hips to there
SKY = (0.78, 0.84, 0.90)
_INCLUDE = re.compile(r"^// #include (\S+)$", re.MULTILINE)


def load_shader(name: str, defines: dict[str, int] | None = None) -> str:
    """GLSL source with its `// #include` lines expanded and `defines` after the #version line."""
    folder = data_dir("shaders")
    source = (folder / name).read_text(encoding="utf-8")
    source = _INCLUDE.sub(lambda match: (folder / match.group(1)).read_text(encoding="utf-8"), source)
    if defines:
        version, rest = source.split("\n", 1)
        source = version + "\n" + "".join(f"#define {k} {v}\n" for k, v in defines.items()) + rest
    return source


def _bytes(matrix: glm.mat4) -> bytes:
    return matrix.to_bytes()


@dataclasses.dataclass
class ViewOptions:
    debug: bool = True
    debug_joints: bool = False
    show_areas: bool = True
    show_contacts: bool = True
    crowd_trajectories: bool = True    # with a crowd, every character's trajectory (else the player's only)
    skeleton: bool = False             # the canonical skeleton's bones over the drawn body


class Renderer:
    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        program = lambda vert, frag: ctx.program(vertex_shader=load_shader(vert), fragment_shader=load_shader(frag))
        self.terrain_program = ctx.program(vertex_shader=load_shader("terrain.vert"),
                                           fragment_shader=load_shader("terrain.frag", {"NEAR_CHARACTER": 1}))
        self.far_terrain_program = ctx.program(vertex_shader=load_shader("terrain.vert"),
                                               fragment_shader=load_shader("terrain.frag", {"NEAR_CHARACTER": 0}))
        self.shadow_terrain_program = ctx.program(vertex_shader=load_shader("terrain.vert"),
                                                  fragment_shader=load_shader("terrain.frag", {"NEAR_CHARACTER": 2}))
        self.character_program = program("character.vert", "character.frag")
        self.rig_program = program("rig.vert", "rig.frag")
        self.shadow_character_program = program("shadow_character.vert", "depth_only.frag")
        self.lines_program = program("lines.vert", "lines.frag")
        self.overlay_program = program("overlay.vert", "overlay.frag")
        self.programs = SimpleNamespace(character=self.character_program, rig=self.rig_program,
                                        shadow_character=self.shadow_character_program)
        # In software rendering the crowd's vertices are most of its cost: the mannequin draws the
        # crowd with a quarter of the player's vertices, its shadows with fewer still.
        self.mannequin = self.body = MannequinBody(ctx, self.programs)

        self._shadow_size = 0
        self._set_shadow_size(SHADOW_SIZE)
        self._skin_texture = None

        corners = np.array([0, 0, 1, 0, 0, 1, 1, 1], np.float32)
        self.overlay_vao = ctx.vertex_array(self.overlay_program, [(ctx.buffer(corners.tobytes()), "2f", "in_corner")])
        self._overlay_textures: dict[str, moderngl.Texture] = {}
        self._lines_vbo = ctx.buffer(reserve=4 * 6 * 4096, dynamic=True)
        self._indirect = ctx.buffer(reserve=20 * 1024, dynamic=True)
        self._lines_vao = ctx.vertex_array(self.lines_program, [(self._lines_vbo, "3f 3f", "in_position", "in_colour")])
        self.scene = None
        self._terrain_objects = []

    def _set_shadow_size(self, size: int) -> None:
        if size == self._shadow_size:
            return
        if self._shadow_size:
            self.shadow_fbo.release()
            self.shadow_depth.release()
        self.shadow_depth = self.ctx.depth_texture((size, size))
        self.shadow_depth.compare_func = "<="
        self.shadow_depth.filter = (moderngl.LINEAR, moderngl.LINEAR)
        self.shadow_depth.repeat_x = self.shadow_depth.repeat_y = False
        self.shadow_fbo = self.ctx.framebuffer(depth_attachment=self.shadow_depth)
        self._shadow_size = size

    def set_body(self, body) -> None:
        """Draw every character as `body` (body.MannequinBody or body.RigBody); None: the mannequin."""
        if self.body is not self.mannequin and self.body is not body:
            self.body.release()
        self.body = body or self.mannequin

    def _upload_skins(self, drawn: np.ndarray, ground, rows: int | None = None) -> None:
        """Skinning matrices of the first `rows` characters of `drawn` (K, 31, 4, 4), already in
        draw order, into the skin texture (K rows: its size stays while the crowd does)."""
        rows = len(drawn) if rows is None else rows
        skins = self.body.skins(drawn[:rows], ground)
        joints = skins.shape[1]
        columns = np.ascontiguousarray(np.swapaxes(skins, -1, -2)).reshape(rows, joints * 4, 4)
        texture = self._skin_texture
        if texture is None or texture.size != (joints * 4, len(drawn)):
            if texture is not None:
                texture.release()      # GPU objects are not freed by garbage collection
            texture = self._skin_texture = self.ctx.texture((joints * 4, len(drawn)), 4, dtype="f4")
            texture.filter = (moderngl.NEAREST, moderngl.NEAREST)
        texture.write(columns.tobytes(), viewport=(0, 0, joints * 4, rows))      # float32 already
        texture.use(location=2)
        for program in self.body.colour_programs + [self.shadow_character_program]:
            program["skin_texture"].value = 2

    # -- scene -------------------------------------------------------------------------------------

    def set_scene(self, scene) -> None:
        """Upload the terrain of `scene` (normals and ambient occlusion are computed here)."""
        if self.scene is scene:
            return
        for old in self._terrain_objects:      # GPU objects are not freed by garbage collection
            old.release()
        self.terrain_mesh = mesh = TerrainMesh(scene.heightmap, np.array(LIGHT_OFFSET))
        vbo, ibo = self.ctx.buffer(mesh.vertices.tobytes()), self.ctx.buffer(mesh.indices.tobytes())
        layout = [(vbo, "3f 3f 3f", "in_position", "in_lit", "in_shadowed")]
        # The far program leaves the shadowed light unused; skip_errors lets that attribute go.
        self.terrain_vao = self.ctx.vertex_array(self.terrain_program, layout, ibo, index_element_size=4)
        self.far_terrain_vao = self.ctx.vertex_array(self.far_terrain_program, layout, ibo, index_element_size=4,
                                                     skip_errors=True)
        self.shadow_terrain_vao = self.ctx.vertex_array(self.shadow_terrain_program, layout, ibo, index_element_size=4)
        self._terrain_objects = [self.terrain_vao, self.far_terrain_vao, self.shadow_terrain_vao, vbo, ibo]
        self.scene = scene

    # -- frame ---------------------------------------------------------------------------------------

    def matrices(self, camera, size: tuple[int, int], focus=None,
                 extent: float = SHADOW_EXTENT) -> tuple[glm.mat4, glm.mat4]:
        """Camera view-projection, and the light's matrix for a shadow map of half-size `extent`
        centred on `focus`."""
        aspect = size[0] / max(size[1], 1)
        projection = glm.perspective(math.radians(VERTICAL_FOV), aspect, NEAR, FAR)
        target = glm.vec3(*(float(v) for v in focus)) if focus is not None else camera.target
        light_view = glm.lookAt(target + LIGHT_OFFSET, target, glm.vec3(0, 1, 0))
        light_projection = glm.ortho(-extent, extent, -extent, extent, NEAR, FAR)
        return projection * camera.view_matrix(), light_projection * light_view

    def render(self, framebuffer: moderngl.Framebuffer, frame, options: ViewOptions,
               overlays: list[tuple[str, object, tuple[int, int]]] = (), size: tuple[int, int] | None = None) -> None:
        """Draw a `frame.DrawnFrame` (the live controller, a playback, a still pose) into
        `framebuffer`: every character as the current body, in one instanced draw per pass.

        `overlays`: (name, pygame surface, (x, y)) drawn on top in order. `size`: the drawable size
        when it differs from the framebuffer's own (a window's default framebuffer after a resize).
        """
        ctx = self.ctx
        self.set_scene(frame.scene)
        size = tuple(size or framebuffer.size)
        drawn = frame.drawn_transforms()
        joints = drawn[0, :, :3, 3]
        count = len(drawn)
        extent = SHADOW_EXTENT if count == 1 else CROWD_SHADOW_EXTENT
        self._set_shadow_size(SHADOW_SIZE if count == 1 else CROWD_SHADOW_SIZE)
        view_projection, light_matrix = self.matrices(frame.camera, size, joints[0], extent)
        light_dir = glm.normalize(-LIGHT_OFFSET)
        ground = frame.scene.heightmap.sample
        if count == 1:
            order, seen, shadowing = np.zeros(1, np.intp), 0, (0, 0)
            self._upload_skins(drawn, ground)
            casters = None
        else:
            order, seen, shadowing = _crowd_draw_order(drawn[:, 0, :3, 3], view_projection, light_matrix,
                                                       np.array(frame.camera.position, np.float32), self.body.radius)
            # Only the characters drawn in either pass are posed (a rig's retargeting costs).
            self._upload_skins(drawn[order], ground, max(1 + seen, shadowing[1]))
            casters = drawn[order[shadowing[0]:shadowing[1]], 0, :3, 3]

        # Shadow pass: the character, in a map centred on it. The light's direction is fixed, so the
        # terrain's own shadows are baked with its mesh (terrain_mesh.bake_sun_visibility).
        self.shadow_fbo.use()
        self.shadow_fbo.clear(depth=1.0)
        ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.cull_face = "front"
        self.shadow_character_program["light_matrix"].write(_bytes(light_matrix))
        self.body.draw(True, *shadowing)

        # Main pass.
        framebuffer.use()
        ctx.viewport = (0, 0, size[0], size[1])
        framebuffer.clear(*SKY, 1.0, depth=1.0)
        ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.cull_face = "back"
        self.shadow_depth.use(location=0)
        feet = joints[CONTACT_JOINTS].astype(np.float32)
        self.far_terrain_program["view_projection"].write(_bytes(view_projection))
        for program in [self.terrain_program, self.shadow_terrain_program] + self.body.colour_programs:
            program["view_projection"].write(_bytes(view_projection))
            program["light_matrix"].write(_bytes(light_matrix))
            program["shadow_map"].value = 0
        for program in self.body.colour_programs:
            program["light_dir"].value = tuple(light_dir)
            for name, value in lighting.uniforms().items():
                program[name].value = value
        self.terrain_program["foot_positions"].write(feet.tobytes())
        self.terrain_program["hip_position"].value = tuple(float(v) for v in joints[0])
        # The characters before the terrain: the depth test then spares the shading of the ground
        # they hide (in software rendering a crowd hides much of it).
        self.body.draw(False, 1, 1 + seen)
        self._render_terrain(view_projection, frame.camera.position, joints[0], casters)

        if options.debug:
            self._draw_debug(frame, options, view_projection)
        ctx.disable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        for name, surface, position in overlays:
            self._draw_overlay(name, surface, position, size)

    def _render_terrain(self, view_projection: glm.mat4, eye, hip, casters: np.ndarray | None = None) -> None:
        """The terrain tiles inside the view, full resolution near the camera; the tiles the
        player's shadow and contacts can reach (a capsule from the hips away from the light) with
        the full shader, those only the other characters' shadows reach (capsules from the hips of
        `casters` (K, 3)) with the shadow alone, the others with neither."""
        matrix = np.array(view_projection.to_list(), np.float32).T   # glm is column-major
        away = np.array(glm.normalize(glm.vec2(-LIGHT_OFFSET.x, -LIGHT_OFFSET.z)))

        def segments(points):
            starts = np.asarray(points, np.float32).reshape(-1, 3)[:, [0, 2]]
            return np.stack([starts, starts + SHADOW_REACH * away], axis=1)

        others = None if casters is None or not len(casters) else segments(casters)
        near, shadowed, far = self.terrain_mesh.visible_ranges(matrix, tuple(eye), near_segment=segments(hip),
                                                               near_radius=NEAR_RADIUS, focus=hip,
                                                               shadow_segments=others)
        for vao, ranges in ((self.terrain_vao, near), (self.shadow_terrain_vao, shadowed), (self.far_terrain_vao, far)):
            if not ranges:
                continue
            # One multi-draw per program: (count, instances, first index, base vertex, base instance).
            commands = np.zeros((len(ranges), 5), np.uint32)
            commands[:, 0] = [count for _, count in ranges]
            commands[:, 1] = 1
            commands[:, 2] = [first for first, _ in ranges]
            data = commands.tobytes()
            if self._indirect.size < len(data):
                self._indirect.orphan(len(data))
            self._indirect.write(data)
            vao.render_indirect(self._indirect, moderngl.TRIANGLES, count=len(ranges))

    def _draw_debug(self, frame, options: ViewOptions, view_projection: glm.mat4) -> None:
        self._draw_lines(debug_geometry(frame, options), view_projection)
        if options.skeleton:    # seen through the body
            self.ctx.disable(moderngl.DEPTH_TEST)
            lines, joints = skeleton_geometry(frame)
            self._draw_lines((lines, np.zeros((0, 6), np.float32), joints), view_projection)

    def _draw_lines(self, geometry, view_projection: glm.mat4) -> None:
        lines, points, big_points = geometry
        self.lines_program["view_projection"].write(_bytes(view_projection))
        self.ctx.enable(moderngl.PROGRAM_POINT_SIZE)
        for data, mode, point_size in ((lines, moderngl.LINES, 1.0), (points, moderngl.POINTS, 3.0),
                                       (big_points, moderngl.POINTS, 7.0)):
            if not len(data):
                continue
            raw = data.astype(np.float32).tobytes()
            if len(raw) > self._lines_vbo.size:
                self._lines_vbo.orphan(len(raw))
            self._lines_vbo.write(raw)
            self.lines_program["point_size"].value = point_size
            self._lines_vao.render(mode, vertices=len(data))

    def _draw_overlay(self, name: str, surface, position: tuple[int, int], size: tuple[int, int]) -> None:
        import pygame   # only the overlays need pygame (fonts); the simulation never does

        width, height = surface.get_size()
        texture = self._overlay_textures.get(name)
        if texture is None or texture.size != (width, height):
            if texture is not None:
                texture.release()      # GPU objects are not freed by garbage collection
            texture = self.ctx.texture((width, height), 4)
            texture.filter = (moderngl.NEAREST, moderngl.NEAREST)
            self._overlay_textures[name] = texture
        texture.write(pygame.image.tobytes(surface, "RGBA"))
        self.ctx.enable(moderngl.BLEND)
        self.ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        texture.use(location=1)
        self.overlay_program["image"].value = 1
        self.overlay_program["rectangle"].value = (float(position[0]), float(position[1]), float(width), float(height))
        self.overlay_program["screen_size"].value = (float(size[0]), float(size[1]))
        self.overlay_vao.render(moderngl.TRIANGLE_STRIP)
        self.ctx.disable(moderngl.BLEND)




def _spheres_inside(matrix: glm.mat4, centres: np.ndarray, radius: float) -> np.ndarray:
    """Which spheres (N, 3) reach into the clip volume of `matrix` (a projection times a view)."""
    m = np.array(matrix.to_list(), np.float64).T   # glm is column-major
    planes = np.stack([m[3] + m[0], m[3] - m[0], m[3] + m[1], m[3] - m[1], m[3] + m[2], m[3] - m[2]])
    planes /= np.linalg.norm(planes[:, :3], axis=1, keepdims=True)
    return np.all(centres @ planes[:, :3].T + planes[:, 3] > -radius, axis=1)


def _crowd_draw_order(hips: np.ndarray, view_projection: glm.mat4, light_matrix: glm.mat4, eye: np.ndarray,
                      radius: float):
    """Rows of the skin texture: the player, then the others seen by the camera but outside the
    shadow map, those seen and casting into it, those casting only, and the rest (drawn in neither
    pass); each group nearest the camera `eye` first, so that the depth test spares the shading of
    those behind. `radius`: a sphere about the hips holding a body. Returns (order, how many others are seen, (first, stop) of the shadow casters' rows)."""
    others = 1 + np.argsort(np.sum((hips[1:] - eye) ** 2, axis=1), kind="stable")
    seen = _spheres_inside(view_projection, hips[others], radius)
    casting = _spheres_inside(light_matrix, hips[others], radius)
    groups = [others[seen & ~casting], others[seen & casting], others[~seen & casting], others[~seen & ~casting]]
    order = np.concatenate([[0]] + groups).astype(np.intp)
    first_caster = 1 + len(groups[0])
    return order, int(seen.sum()), (first_caster, first_caster + len(groups[1]) + len(groups[2]))
