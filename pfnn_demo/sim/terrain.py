"""Heightmaps: the original text format, the project's compact .npz, bilinear sampling, normals.

A heightmap is a (w, h) grid of heights in world units; grid line x is world X, column y is world Z,
cell size `cell_size` (the original: 3.937007874 = 100/25.4), centred by integer division
(original-demo.md: Heightmaps): index = world / cell_size + (size // 2).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..errors import HeightmapError
from .npz_files import read_npz

ORIGINAL_CELL_SIZE = 3.937007874
ORIGINAL_VERTICAL_SCALE = 3.0
FORMAT_VERSION = 1
# Unit offsets of Heightmap.sample_footprint's five points: the centre and a knight's move round it.
_FOOTPRINT = np.array([(0, 0), (2, 1), (-1, 2), (-2, -1), (1, -2)], np.float32) / np.float32(math.sqrt(5.0))


def grid_world_xz(shape: tuple[int, int], cell_size: float) -> tuple[np.ndarray, np.ndarray]:
    """World x and z of every vertex of a (w, h) grid, centred as `sample` centres it (original-demo.md:
    Heightmaps)."""
    w, h = shape
    x = (np.arange(w) - w // 2) * cell_size
    z = (np.arange(h) - h // 2) * cell_size
    return np.meshgrid(x, z, indexing="ij")


class Heightmap:
    def __init__(self, heights: np.ndarray, cell_size: float = ORIGINAL_CELL_SIZE, name: str = ""):
        heights = np.asarray(heights, dtype=np.float32)
        if heights.ndim != 2 or min(heights.shape) < 2:
            raise HeightmapError(f"heights must be a 2-D grid of at least 2x2, got shape {heights.shape}", name)
        if not np.all(np.isfinite(heights)):
            raise HeightmapError("heights hold NaN or infinite values", name)
        if not (cell_size > 0 and np.isfinite(cell_size)):
            raise HeightmapError(f"cell size must be a positive number, got {cell_size}", name)
        self.heights = np.ascontiguousarray(heights)
        self._flat = self.heights.reshape(-1)
        self.cell_size = float(cell_size)
        self.name = name
        self._inv_cell = np.float32(1.0 / self.cell_size)
        self._centre = np.array([heights.shape[0] // 2, heights.shape[1] // 2], dtype=np.float32)
        self._last = np.array(heights.shape, dtype=np.int64) - 1
        self._centre_x, self._centre_z = heights.shape[0] // 2, heights.shape[1] // 2
        self._last_x, self._last_z = heights.shape[0] - 1, heights.shape[1] - 1
        self._rows = None  # a memoryview for height_at, made on first use

    @property
    def shape(self) -> tuple[int, int]:
        return self.heights.shape

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """World (x_min, x_max, z_min, z_max) covered by the grid."""
        w, h = self.shape
        return (-(w // 2) * self.cell_size, (w - 1 - w // 2) * self.cell_size,
                -(h // 2) * self.cell_size, (h - 1 - h // 2) * self.cell_size)

    def sample(self, x, z):
        """Bilinear height at world (x, z), clamped to the edge; scalars or arrays of any shape."""
        fx = np.asarray(x, dtype=np.float32) * self._inv_cell + self._centre[0]
        fz = np.asarray(z, dtype=np.float32) * self._inv_cell + self._centre[1]
        x_floor, z_floor = np.floor(fx), np.floor(fz)
        ax, az = fx - x_floor, fz - z_floor
        xi, zi = x_floor.astype(np.intp), z_floor.astype(np.intp)
        last_x, last_z = self._last_x, self._last_z
        # Row offsets into the flattened grid: one gather per corner instead of 2-D fancy indexing.
        x0 = np.minimum(np.maximum(xi, 0), last_x) * (last_z + 1)
        x1 = np.minimum(np.maximum(xi + 1, 0), last_x) * (last_z + 1)
        z0 = np.minimum(np.maximum(zi, 0), last_z)
        z1 = np.minimum(np.maximum(zi + 1, 0), last_z)
        flat = self._flat
        near = flat[x0 + z0] * (1 - ax) + flat[x1 + z0] * ax
        far = flat[x0 + z1] * (1 - ax) + flat[x1 + z1] * ax
        result = near * (1 - az) + far * az
        return float(result) if np.ndim(result) == 0 else result

    def sample_footprint(self, x, z, radius: float) -> np.ndarray:
        """The mean of `sample` at (x, z) and at four points `radius` away around it, a foot's
        worth of ground instead of one point; radius 0: `sample` alone. Arrays of any shape.
        The four lie a knight's move apart ((2, 1) turned by quarter turns, scaled): seen across
        an edge along world X or Z, the five stand evenly spaced, so crossing such an edge climbs
        in five even steps (a plain cross puts three points on the edge at once)."""
        x, z = np.asarray(x, np.float32), np.asarray(z, np.float32)
        if radius <= 0:
            return self.sample(x, z)
        # One `sample` per point of the footprint rather than one over all five: a crowd's five
        # times as many points made NumPy's temporaries large enough to cost 10x per point.
        total = np.zeros(x.shape, np.float64)
        for dx, dz in np.float32(radius) * _FOOTPRINT:
            total += self.sample(x + dx, z + dz)
        return (total / 5.0).astype(np.float32)

    def grid_world_xz(self) -> tuple[np.ndarray, np.ndarray]:
        """World x and z of every grid vertex, (w, h) each."""
        return grid_world_xz(self.shape, self.cell_size)

    def height_at(self, x: float, z: float) -> float:
        """`sample` for one point, in plain Python (a few times faster than numpy for scalars)."""
        fx = x / self.cell_size + self._centre_x
        fz = z / self.cell_size + self._centre_z
        x_floor, z_floor = math.floor(fx), math.floor(fz)
        ax, az = fx - x_floor, fz - z_floor
        last_x, last_z = self._last_x, self._last_z
        x0 = min(max(x_floor, 0), last_x)
        x1 = min(max(x_floor + 1, 0), last_x)
        z0 = min(max(z_floor, 0), last_z)
        z1 = min(max(z_floor + 1, 0), last_z)
        rows = self._rows
        if rows is None:
            # A memoryview reads single values as Python floats without keeping a float object
            # per grid point (a nested list would hold 250,000 of them per scene).
            rows = self._rows = memoryview(self.heights)
        near = rows[x0, z0] * (1 - ax) + rows[x1, z0] * ax
        far = rows[x0, z1] * (1 - ax) + rows[x1, z1] * ax
        return near * (1 - az) + far * az

    def normals(self, x, z, step: float | None = None) -> np.ndarray:
        """Unit surface normals at world (x, z) by central differences of `sample`, (..., 3)."""
        step = self.cell_size if step is None else step
        x, z = np.asarray(x, np.float32), np.asarray(z, np.float32)
        dx = (np.asarray(self.sample(x + step, z)) - self.sample(x - step, z)) / (2 * step)
        dz = (np.asarray(self.sample(x, z + step)) - self.sample(x, z - step)) / (2 * step)
        n = np.stack([-dx, np.ones_like(dx), -dz], axis=-1)
        return n / np.linalg.norm(n, axis=-1, keepdims=True)

    def grid_normals(self) -> np.ndarray:
        """Normals at every grid vertex, (w, h, 3)."""
        gx, gz = np.gradient(self.heights.astype(np.float64), self.cell_size)
        n = np.stack([-gx, np.ones_like(gx), -gz], axis=-1)
        return (n / np.linalg.norm(n, axis=-1, keepdims=True)).astype(np.float32)

    # -- files ---------------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, heights=self.heights, cell_size=np.float32(self.cell_size),
                            format_version=np.int32(FORMAT_VERSION))

    @classmethod
    def load(cls, path: str | Path) -> "Heightmap":
        path = Path(path)
        if not path.is_file():
            raise HeightmapError("no such heightmap file", path)
        if path.suffix.lower() == ".txt":
            return cls.load_original_text(path)
        if path.suffix.lower() != ".npz":
            raise HeightmapError("unknown heightmap format (expected .npz, or the original .txt)", path)
        data = read_npz(path, HeightmapError)
        if "heights" not in data:
            raise HeightmapError("the .npz has no 'heights' array", path)
        if "cell_size" not in data:
            raise HeightmapError("the .npz has no 'cell_size' (world units per grid cell)", path)
        try:
            cell = float(data["cell_size"])
        except (TypeError, ValueError):
            raise HeightmapError("the .npz's 'cell_size' is not one number", path) from None
        return cls(data["heights"], cell, name=str(path))

    @classmethod
    def load_original_text(cls, path: str | Path, multiplier: float = 1.0) -> "Heightmap":
        """The original demo's text format (original-demo.md: Heightmaps), including its quirks: every row
        gets one
        extra trailing value (a copy of its last), the mean of all stored values is subtracted,
        heights are scaled by 3 * multiplier, cells are 3.937007874 wide."""
        path = Path(path)
        rows = []
        try:
            with open(path, "r", encoding="ascii") as handle:
                for number, line in enumerate(handle, 1):
                    if not line.strip():
                        continue
                    try:
                        rows.append(np.array(line.split(), dtype=np.float64))
                    except ValueError:
                        raise HeightmapError(f"line {number} holds a value that is not a number", path) from None
        except UnicodeDecodeError:
            raise HeightmapError("not a text heightmap (binary content)", path) from None
        except OSError as error:
            raise HeightmapError(f"cannot read ({error.strerror})", path) from None
        if len(rows) < 2:
            raise HeightmapError(f"has {len(rows)} rows; a heightmap needs at least 2", path)
        lengths = {row.size for row in rows}
        if len(lengths) != 1:
            raise HeightmapError(f"rows have different lengths ({min(lengths)} to {max(lengths)} values)", path)
        data = np.stack(rows)
        data = np.concatenate([data, data[:, -1:]], axis=1)  # the original reader's extra column
        if not np.all(np.isfinite(data)):
            raise HeightmapError("holds NaN or infinite values", path)
        heights = ORIGINAL_VERTICAL_SCALE * multiplier * (data - data.mean())
        return cls(heights.astype(np.float32), ORIGINAL_CELL_SIZE, name=str(path))

    @classmethod
    def flat(cls, size: int = 500, cell_size: float = ORIGINAL_CELL_SIZE) -> "Heightmap":
        return cls(np.zeros((size, size), np.float32), cell_size, name="flat")
