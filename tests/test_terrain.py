"""Heightmaps: the original text format (with its quirks), the project's .npz, sampling, errors."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.errors import HeightmapError
from pfnn_demo.sim.terrain import ORIGINAL_CELL_SIZE, Heightmap

from conftest import require_shared


def test_original_text_heightmap_loads_with_its_quirks():
    path = require_shared("reference/heightmaps/hmap_001_smooth.txt")
    raw = np.loadtxt(path)
    heightmap = Heightmap.load(path)
    # One grid row per line, plus the original reader's extra trailing column (a copy of the last value).
    assert raw.shape == (504, 302)
    assert heightmap.shape == (504, 303)
    padded = np.concatenate([raw, raw[:, -1:]], axis=1)
    expected = 3.0 * (padded - padded.mean())
    np.testing.assert_allclose(heightmap.heights, expected, atol=1e-3)
    # Grid vertex (i, j) sits at world ((i - w//2) * cell, (j - h//2) * cell).
    for i, j in ((0, 0), (252, 151), (503, 302), (100, 37)):
        x, z = (i - 504 // 2) * ORIGINAL_CELL_SIZE, (j - 303 // 2) * ORIGINAL_CELL_SIZE
        assert heightmap.sample(x, z) == pytest.approx(expected[i, j], abs=2e-3)
        assert heightmap.height_at(x, z) == pytest.approx(expected[i, j], abs=2e-3)


def test_sample_is_bilinear_and_clamps_to_the_edge():
    heights = np.arange(12, dtype=np.float32).reshape(4, 3) * 10  # value = 30*i + 10*j
    heightmap = Heightmap(heights, cell_size=2.0)
    # centre index (2, 1): world (0, 0) is grid (2, 1) = 70
    assert heightmap.sample(0.0, 0.0) == pytest.approx(70)
    assert heightmap.sample(1.0, 0.0) == pytest.approx(85)           # halfway to grid (3, 1)
    assert heightmap.sample(1.0, 1.0) == pytest.approx(90)           # bilinear centre of a cell
    assert heightmap.sample(-1000.0, -1000.0) == pytest.approx(0)    # clamped corner
    assert heightmap.sample(1000.0, 1000.0) == pytest.approx(110)
    xs, zs = np.meshgrid(np.linspace(-9, 9, 7), np.linspace(-7, 7, 5))
    vectorised = heightmap.sample(xs, zs)
    assert vectorised.shape == xs.shape
    scalar = np.vectorize(heightmap.height_at)(xs, zs)
    np.testing.assert_allclose(vectorised, scalar, atol=1e-4)


def test_normals_of_a_slope():
    x = np.arange(50, dtype=np.float32)[:, None] * np.ones((1, 40), np.float32)
    heightmap = Heightmap(0.5 * 2.0 * x, cell_size=2.0)   # rises 0.5 per world unit along X
    normal = heightmap.normals(0.0, 0.0)
    np.testing.assert_allclose(normal, np.array([-0.5, 1, 0]) / np.sqrt(1.25), atol=1e-5)
    grid = heightmap.grid_normals()
    np.testing.assert_allclose(grid[10, 10], normal, atol=1e-5)


def test_npz_round_trip(tmp_path):
    heightmap = Heightmap(np.random.default_rng(0).normal(size=(30, 20)).astype(np.float32), cell_size=5.0)
    heightmap.save(tmp_path / "map.npz")
    loaded = Heightmap.load(tmp_path / "map.npz")
    np.testing.assert_array_equal(loaded.heights, heightmap.heights)
    assert loaded.cell_size == 5.0


@pytest.mark.parametrize("content, message", [
    ("1 2 3\n4 5\n", "rows have different lengths"),
    ("1 2 3\n4 x 6\n", "line 2 holds a value that is not a number"),
    ("1 2 3\n", "has 1 rows"),
    ("1 2 nan\n4 5 6\n", "NaN or infinite"),
])
def test_malformed_text_heightmaps(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(HeightmapError, match=message):
        Heightmap.load(path)


def test_malformed_npz_heightmaps(tmp_path):
    np.savez(tmp_path / "a.npz", heights=np.zeros((4, 4)))
    with pytest.raises(HeightmapError, match="no 'cell_size'"):
        Heightmap.load(tmp_path / "a.npz")
    np.savez(tmp_path / "b.npz", cell_size=2.0)
    with pytest.raises(HeightmapError, match="no 'heights'"):
        Heightmap.load(tmp_path / "b.npz")
    np.savez(tmp_path / "c.npz", heights=np.full((4, 4), np.inf), cell_size=2.0)
    with pytest.raises(HeightmapError, match="NaN or infinite"):
        Heightmap.load(tmp_path / "c.npz")
    (tmp_path / "d.npz").write_bytes(b"garbage")
    with pytest.raises(HeightmapError, match="not a readable .npz"):
        Heightmap.load(tmp_path / "d.npz")
    with pytest.raises(HeightmapError, match="no such heightmap"):
        Heightmap.load(tmp_path / "missing.npz")


def test_the_side_height_inputs_climb_a_blocks_edge_as_a_ramp_not_a_step():
    # A character standing against a block with a side sample on its edge: the trajectory sways
    # by fractions of a unit, and the network's side height input must not jump by most of the
    # block's height with it (that fed a network's own sway back and shook it).
    from pfnn_demo.sim.features import INPUT, INPUT_SIZE, SIDE_FOOTPRINT
    from pfnn_demo.sim.trajectory import Trajectory

    block = 55.0
    grid = np.zeros((64, 64), np.float32)
    grid[32:, :] = block                                       # the block: world X from 0 on
    terrain = Heightmap(grid)
    x = np.zeros((1, INPUT_SIZE), np.float32)
    sways = np.arange(-36.0, -13.9, 0.25)                      # the +X side sample, 25 units on: 11 units either side of the edge

    def side_inputs(footprint: float) -> np.ndarray:
        trajectory = Trajectory(1)
        trajectory.side_footprint = footprint
        side = []
        for root_x in sways:
            trajectory.reset(0, np.array([root_x, 0.0, 0.0], np.float32))
            trajectory.write_input(x, terrain)
            side.append(x[0, INPUT["height_side_pos"]][6])
        return np.array(side)

    def steepest(side: np.ndarray) -> float:                   # input units per unit of sway
        assert side[0] == 0.0 and side[-1] == block            # the sample crossed the whole edge
        return float(np.abs(np.diff(side)).max() / 0.25)

    point, footprint = steepest(side_inputs(0.0)), steepest(side_inputs(SIDE_FOOTPRINT))
    assert point > 0.2 * block                                 # the original's single point: a step
    assert footprint < 0.45 * point, (footprint, point)        # five points: a ramp
