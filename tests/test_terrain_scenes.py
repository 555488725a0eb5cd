"""The shipped terrain scenes: walkable where reachable, reproducible, playable with the network."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pfnn_demo.tools.cli import main
from pfnn_demo.sim.controller import Controller
from pfnn_demo.sim.headless import simulate
from pfnn_demo.sim.input_script import InputScript
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
from pfnn_demo.sim.recording import Recorder
from pfnn_demo.resources import data_dir
from pfnn_demo.sim.scene import load_scene, scene_files
from pfnn_demo.tools.terrain_gen import GENERATORS
from pfnn_demo.tools.walkability import check_scene, reachable_mask

from conftest import random_script_dict

SCENES = list(scene_files())


def test_the_promised_scenes_are_shipped_and_small():
    assert {"plaza", "tunnel", "hills", "canyon", "jumps", "urban"} <= set(SCENES)
    folder = data_dir("heightmaps")
    total = sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
    assert total < 15 * 2**20
    assert len(load_scene("jumps").areas.jumps) >= 10
    assert len(load_scene("urban").areas.walls) >= 40
    assert len(load_scene("tunnel").areas.crouches) == 1


@pytest.mark.parametrize("name", SCENES)
def test_scene_is_walkable_where_reachable_and_starts_inside_its_walls(name):
    scene = load_scene(name)
    report = check_scene(scene)
    assert report.start_inside, report
    assert report.ok, report
    assert report.reachable_fraction > 0.05


@pytest.mark.parametrize("name", [n for n in SCENES if "generated_by" in json.loads(scene_files()[n].read_text())])
def test_generated_scene_is_reproducible_from_its_recipe(name):
    path = scene_files()[name]
    spec = json.loads(path.read_text())
    recipe = dict(spec["generated_by"])
    kind, seed = recipe.pop("kind"), recipe.pop("seed")
    generated = GENERATORS[kind](np.random.default_rng(seed), **recipe)
    scene = load_scene(name)
    np.testing.assert_array_equal(generated.heights.astype(np.float32), scene.heightmap.heights)
    np.testing.assert_allclose(np.array(generated.walls).reshape(-1, 5), scene.areas.walls, atol=0.01)


def test_jump_areas_sit_on_obstacles_and_walls_fence_cliffs():
    jumps = load_scene("jumps")
    centres = jumps.areas.jumps[:, [0, 2]]
    assert np.all(jumps.heightmap.sample(centres[:, 0], centres[:, 1]) > 10)   # an obstacle under each
    canyon = load_scene("canyon")
    reachable = reachable_mask(canyon)
    heights = canyon.heightmap.heights
    assert heights[reachable].max() < 60 < heights[~reachable].max()           # the cliffs are fenced off


def test_make_terrain_command(tmp_path, capsys):
    assert main(["make-terrain", "hills", "mine", "--seed", "2", "--set", "amplitude=50",
                 "--out-dir", str(tmp_path)]) == 0
    assert (tmp_path / "mine.json").is_file() and (tmp_path / "mine.npz").is_file()
    assert "walkability: reachable" in capsys.readouterr().out
    scene = load_scene(tmp_path / "mine.json")
    assert np.ptp(scene.heightmap.heights) < 110
    assert main(["make-terrain", "volcano", "x", "--out-dir", str(tmp_path)]) == 2
    assert "unknown terrain kind 'volcano'" in capsys.readouterr().err
    assert main(["make-terrain", "hills", "x", "--set", "height=3", "--out-dir", str(tmp_path)]) == 2
    assert "has no parameter 'height'" in capsys.readouterr().err
    # Out of the limits: reported, and the exit status says so.
    assert main(["make-terrain", "hills", "steep", "--set", "amplitude=900", "--out-dir", str(tmp_path)]) == 1
    assert "outside the limits" in capsys.readouterr().out


@pytest.mark.parametrize("name", SCENES)
def test_sixty_seconds_of_play_in_every_scene(original_weights, name):
    scene = load_scene(name)
    controller = Controller(PhaseFunctionedNetwork(original_weights, "cubic"), scene)
    recorder = Recorder()
    _, failure = simulate(controller, InputScript.from_dict(random_script_dict(seed=21, seconds=61)), 3600, recorder)
    assert failure is None
    recording = recorder.arrays()
    for key, values in recording.items():
        assert np.all(np.isfinite(values)), key
    root = recording["root_position"][:, [0, 2]].astype(np.float64)
    if len(scene.areas.walls):
        assert scene.areas.wall_distance(root).min() > 20 - 1e-3                # never inside a wall
    # The root stays on reachable ground, and the hips follow the terrain: a standing or walking
    # character carries them about 93 units above it; bound [60, 120] allows crouching and steps.
    reachable = reachable_mask(scene)
    cell = scene.heightmap.cell_size
    i = np.clip(np.round(root[:, 0] / cell).astype(int) + scene.heightmap.shape[0] // 2, 0, reachable.shape[0] - 1)
    j = np.clip(np.round(root[:, 1] / cell).astype(int) + scene.heightmap.shape[1] // 2, 0, reachable.shape[1] - 1)
    near = np.zeros_like(reachable)
    near[i, j] = True
    # Allow a cell of rounding at the band's edge next to walls.
    from scipy import ndimage
    assert np.all(ndimage.binary_dilation(reachable, iterations=2)[near])
    hips = recording["joint_positions"][:, 0]
    above = hips[:, 1] - scene.heightmap.sample(hips[:, 0], hips[:, 2])
    assert 60 < above.min() and above.max() < 120, (above.min(), above.max())
