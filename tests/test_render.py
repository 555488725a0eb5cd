"""Offscreen rendering through EGL (Mesa llvmpipe in CI): assertions on pixels."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.sim.controller import Controller
from pfnn_demo.sim.headless import simulate
from pfnn_demo.sim.input_script import InputScript
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
from pfnn_demo.app.render.character_mesh import build_character_mesh, skin_matrices
from pfnn_demo.app.render.menu import Entry, Menu, Page
from pfnn_demo.app.render.offscreen import OffscreenTarget, create_offscreen_context
from pfnn_demo.app.render.renderer import Renderer, ViewOptions
from pfnn_demo.app.render.terrain_mesh import bake_ambient_occlusion, bake_sun_visibility, build_terrain_mesh
from pfnn_demo.sim.scene import load_scene
from pfnn_demo.sim.skeleton import rest_pose_globals
from pfnn_demo.sim.terrain import Heightmap

SIZE = (320, 240)


@pytest.fixture(scope="module")
def gl():
    ctx = create_offscreen_context()
    yield ctx
    ctx.release()


@pytest.fixture(scope="module")
def walked(original_weights):
    controller = Controller(PhaseFunctionedNetwork(original_weights, "cubic"), load_scene("plaza"))
    simulate(controller, InputScript.load("walk_circle"), 200)
    return controller


def _render(gl, controller, options=None, overlays=()):
    renderer = Renderer(gl)
    target = OffscreenTarget(gl, SIZE)
    renderer.render(target.framebuffer, controller, options or ViewOptions(debug=False), overlays)
    return target.read(), renderer


def _character_mask(gl, controller, options=None):
    """Pixels that change when the character is moved far away: the character itself."""
    with_character, renderer = _render(gl, controller, options)
    saved = controller.global_transforms.copy()
    controller.global_transforms[:, :3, 3] += np.array([0, -5000, 0], np.float32)
    without, _ = _render(gl, controller, options)
    controller.global_transforms[:] = saved
    return with_character, without


def test_character_is_visible_near_the_centre_and_differs_from_the_terrain(gl, walked):
    image, without = _character_mask(gl, walked)
    changed = np.any(np.abs(image.astype(int) - without.astype(int)) > 40, axis=-1)
    assert changed.sum() > 0.01 * changed.size
    rows, cols = np.nonzero(changed)
    # The camera looks at the character: its pixels gather around the middle of the picture.
    assert abs(cols.mean() - SIZE[0] / 2) < 0.2 * SIZE[0]
    assert abs(rows.mean() - SIZE[1] / 2) < 0.3 * SIZE[1]
    # Its colour (warm albedo 1, 0.9, 0.6) differs from the grey terrain.
    character = image[changed].astype(float)
    assert np.mean(character[:, 0] - character[:, 2]) > 20
    terrain = without[SIZE[1] - 20:, :].astype(float)
    assert np.mean(np.abs(terrain[..., 0] - terrain[..., 2])) < 15


def _cast_shadow_region(controller, renderer, joints, radius: float, towards: float = -1.0) -> np.ndarray:
    """(H, W) pixels within `radius` of where the light casts `joints` onto the terrain (or, with
    `towards` +1, as far the other way: towards the light)."""
    from pfnn_demo.app.render.lighting import LIGHT_OFFSET

    view_projection, _ = renderer.matrices(controller.camera, SIZE, controller.joint_positions[0])
    towards_light = np.array(LIGHT_OFFSET)
    points = controller.global_transforms[joints, :3, 3].astype(float)
    ground = controller.scene.heightmap.sample(points[:, 0], points[:, 2])
    offset = ((points[:, 1] - ground) / towards_light[1])[:, None] * towards_light * np.array([1.0, 0.0, 1.0])
    cast = np.c_[points[:, 0], ground, points[:, 2]] + towards * offset
    clip = np.array(view_projection.to_list()).T @ np.c_[cast, np.ones(len(cast))].T     # glm is column-major
    ndc = clip[:2] / clip[3]
    columns, rows = (ndc[0] + 1) / 2 * SIZE[0], (1 - ndc[1]) / 2 * SIZE[1]
    grid_rows, grid_columns = np.mgrid[:SIZE[1], :SIZE[0]]
    distance = np.min(np.hypot(grid_rows[..., None] - rows, grid_columns[..., None] - columns), axis=-1)
    return distance < radius


def test_the_character_shadow_darkens_the_terrain_where_the_light_casts_it(gl, walked):
    image, without = _character_mask(gl, walked)
    _, renderer = _render(gl, walked)
    # The character by its colour (warm albedo 1, 0.9, 0.6; the terrain is grey, lit or shaded).
    character = image[..., 0].astype(int) - image[..., 2].astype(int) > 25
    darker = without.astype(float).sum(-1) - image.astype(float).sum(-1) > 30
    # Where the light (from +3000, +3700, +1500) casts the upper body: away from the feet, whose
    # contact darkening is drawn without the shadow map.
    upper_body = [11, 12, 13, 15, 16, 18, 19, 25, 26]
    region = _cast_shadow_region(walked, renderer, upper_body, radius=10.0) & ~character
    assert region.sum() > 200
    shadow = darker & region
    assert shadow.sum() > 0.2 * region.sum(), (shadow.sum(), region.sum())
    # As far on the other side, towards the light, the terrain is not darkened.
    lit_side = _cast_shadow_region(walked, renderer, upper_body, radius=10.0, towards=1.0) & ~character
    assert lit_side.sum() > 200
    assert (darker & lit_side).sum() < 0.05 * lit_side.sum(), (darker & lit_side).sum()


def test_menu_overlay_draws_text(gl, walked):
    menu = Menu()
    menu.show(Page("pfnn-demo", [Entry(lambda: "Resume"), Entry(lambda: "Quit")]))
    surface = menu.draw(SIZE)
    image, _ = _render(gl, walked, overlays=[("menu", surface, (0, 0))])
    plain, _ = _render(gl, walked)
    box = image[SIZE[1] // 2 - 60:SIZE[1] // 2 + 60, 20:SIZE[0] - 20].astype(int)
    # The light box holds dark glyphs: many near-black pixels on a light background.
    dark = np.all(box < 90, axis=-1).sum()
    light = np.all(box > 200, axis=-1).sum()
    assert dark > 100 and light > 1000
    assert np.mean(np.abs(image.astype(int) - plain.astype(int))) > 10


def test_debug_drawing_adds_trajectory_pixels(gl, walked):
    plain, _ = _render(gl, walked, ViewOptions(debug=False))
    debug, _ = _render(gl, walked, ViewOptions(debug=True))
    assert np.sum(np.any(np.abs(plain.astype(int) - debug.astype(int)) > 60, axis=-1)) > 100


def test_terrain_mesh_and_baked_light():
    bumpy = Heightmap(np.zeros((60, 60), np.float32), cell_size=4.0)
    bumpy.heights[28:32, 28:32] = 80.0       # a tall block in the middle of flat ground
    vertices, indices = build_terrain_mesh(bumpy, towards_light=np.array([1.0, 1.0, 0.0]))
    assert vertices.shape == (3600, 8) and indices.size == 59 * 59 * 6
    normals = vertices[:, 3:6].reshape(60, 60, 3)
    assert np.allclose(normals[5, 5], [0, 1, 0])
    ao = bake_ambient_occlusion(bumpy)
    assert ao[5, 5] == pytest.approx(1.0) and ao[27, 30] < 0.9          # open ground vs next to the block
    sun = bake_sun_visibility(bumpy, np.array([1.0, 1.0, 0.0]))
    assert sun[26, 30] < 0.5 and sun[34, 30] == pytest.approx(1.0)      # shadowed on the far side only


def test_character_mesh_skins_to_the_rest_pose():
    vertices, indices = build_character_mesh()
    weights = vertices[:, 10:14]
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    assert indices.max() < len(vertices)
    rest = np.tile(np.eye(4, dtype=np.float32), (31, 1, 1))
    rest[:, :3, 3] = rest_pose_globals()
    np.testing.assert_allclose(skin_matrices(rest), np.tile(np.eye(4), (31, 1, 1)), atol=1e-5)
    # The body spans a person: about 160 units tall in the rest pose, feet at the bottom.
    height = vertices[:, 1].max() - vertices[:, 1].min()
    assert 140 < height < 190
