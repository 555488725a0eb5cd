"""Scenes and areas: registry, files, wall push, jump and crouch weights."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pfnn_demo.errors import SceneError
from pfnn_demo.sim.scene import Areas, load_scene, load_scene_file, scene_files

from conftest import require_shared


def test_registry_lists_the_shipped_scenes_in_order():
    names = list(scene_files())
    assert names[:2] == ["plaza", "tunnel"]
    for name in names:
        scene = load_scene(name)
        assert scene.display_name and scene.heightmap.shape[0] > 10
        # The start lies inside the walls: farther than every wall's width from all of them.
        if len(scene.areas.walls):
            assert np.min(scene.areas.wall_distance(np.array([scene.start]))) > scene.areas.walls[:, 4].max()


def test_shipped_scenes_match_the_original_areas():
    original = json.loads(require_shared("spec/original_scenes.json").read_text())
    plaza, tunnel = load_scene("plaza"), load_scene("tunnel")
    np.testing.assert_allclose(plaza.areas.walls, original["0"]["walls"])
    np.testing.assert_allclose(tunnel.areas.walls, original["1"]["walls"])
    np.testing.assert_allclose(tunnel.areas.crouches, original["1"]["crouches"])
    assert plaza.start == tuple(original["0"]["start"])
    assert np.all(plaza.heightmap.heights == 0)


def test_wall_push_keeps_points_a_width_away_and_handles_a_point_on_the_wall():
    areas = Areas(walls=[[0, -100, 0, 100, 20]])
    pushed, moved = areas.push_out_of_walls([5.0, 30.0])
    assert moved and pushed == pytest.approx([20.0, 30.0])
    pushed, moved = areas.push_out_of_walls([-3.0, 0.0])
    assert moved and pushed == pytest.approx([-20.0, 0.0])
    pushed, moved = areas.push_out_of_walls([0.0, 50.0])          # exactly on the wall: no NaN
    assert moved and np.all(np.isfinite(pushed)) and abs(pushed[0]) == pytest.approx(20.0)
    pushed, moved = areas.push_out_of_walls([25.0, 0.0])
    assert not moved and pushed == pytest.approx([25.0, 0.0])
    # Past the end cap the push is radial from the end point.
    pushed, _ = areas.push_out_of_walls([0.0, 110.0])
    assert pushed == pytest.approx([0.0, 120.0])


def test_long_wall_is_not_skipped_near_its_end():
    # The original skips walls when |p - midpoint| > length; a point beside the end of a short wall
    # can be farther than that from the midpoint and still be inside the wall's width.
    areas = Areas(walls=[[0, 0, 10, 0, 20]])
    pushed, moved = areas.push_out_of_walls([19.0, 5.0])
    assert moved and np.linalg.norm(np.array(pushed) - [10, 0]) == pytest.approx(20.0)


def test_jump_and_crouch_and_bump_weights():
    areas = Areas(jumps=[[0, 5, 0, 75, 100]], crouches=[[0, 5, 0, 1000, 250]], walls=[[500, -50, 500, 50, 20]])
    points = np.array([[0, 5, 0], [0, 5, 125], [0, 5, 500], [0, 5, 900]], np.float32)
    np.testing.assert_allclose(areas.jump_weights(points), [1.0, 0.5, 0.0, 0.0])
    crouch = areas.apply_crouch(points, np.zeros(4, np.float32))
    assert crouch[0] == pytest.approx(0.5)            # 1 - wave at x = 0: (sin 0 + 1)/2 = 0.5
    # The original tests the sum of the axis excesses (an L1-shaped region, kept as the original):
    # at z = 500 the x excess (-500) outweighs the z excess (375), so the point still counts inside.
    assert crouch[2] == pytest.approx(0.5)
    assert crouch[3] == pytest.approx(0.0)            # far outside
    bump = areas.bump_weights(np.array([[485.0, 0], [475.0, 0], [0.0, 0]]))
    np.testing.assert_allclose(bump, [1.0, 0.5, 0.0])


def _write(tmp_path, spec):
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(spec) if isinstance(spec, dict) else spec)
    return path


@pytest.mark.parametrize("spec, message", [
    ("{not json", "not valid JSON"),
    ({"start": [0, 0]}, "missing 'heightmap'"),
    ({"heightmap": "flat.npz"}, "missing 'start'"),
    ({"heightmap": "flat.npz", "start": [0]}, r"'start' must be \[x, z\]"),
    ({"heightmap": "flat.npz", "start": [0, 0], "walls": [[0, 0, 1]]}, "'walls' must be a list"),
    ({"heightmap": "flat.npz", "start": [0, 0], "walls": [[0, 0, 1, 1, 0]]}, "positive width"),
    ({"heightmap": "nowhere.npz", "start": [0, 0]}, "its heightmap cannot be loaded"),
])
def test_malformed_scene_files(tmp_path, spec, message):
    from pfnn_demo.sim.terrain import Heightmap
    Heightmap.flat(10).save(tmp_path / "flat.npz")
    with pytest.raises(SceneError, match=message):
        load_scene_file(_write(tmp_path, spec))


def test_unknown_scene_name_lists_the_scenes():
    with pytest.raises(SceneError, match="unknown scene 'nowhere'; the scenes are: plaza, tunnel"):
        load_scene("nowhere")
