"""Scenes: a heightmap plus walls, jump areas and crouch areas, a start position and a display name.

A scene file is JSON (see heightmaps/README.md):

    {"name": "plaza", "display_name": "Plaza", "heightmap": "flat.npz", "start": [0, 0],
     "walls": [[x0, z0, x1, z1, width], ...],
     "jump_areas": [[x, y, z, radius, falloff], ...],
     "crouch_areas": [[x, y, z, size_x, size_z], ...]}

The area geometry (wall push, jump and crouch weights) is here too, vectorised over points.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np

from ..errors import HeightmapError, SceneError
from ..resources import data_dir
from .terrain import Heightmap

# wavelength and amplitude of the crouch ceiling (original-demo.md: Scenes and areas; Areas, heights and the
# input)
CROUCH_WAVE = 50.0
BUMP_FADE = 10.0    # the bump gait fades out over this distance beyond a wall's width


@dataclasses.dataclass
class Areas:
    walls: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 5), np.float32))
    jumps: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 5), np.float32))
    crouches: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 5), np.float32))

    def __post_init__(self):
        self.walls = np.asarray(self.walls, np.float32).reshape(-1, 5)
        self.jumps = np.asarray(self.jumps, np.float32).reshape(-1, 5)
        self.crouches = np.asarray(self.crouches, np.float32).reshape(-1, 5)
        starts, stops = self.walls[:, 0:2], self.walls[:, 2:4]
        self._wall_start = starts.astype(np.float64)
        self._wall_vector = (stops - starts).astype(np.float64)
        length2 = np.sum(self._wall_vector ** 2, axis=1)
        self._wall_length2 = np.where(length2 > 0, length2, 1.0)
        self._wall_degenerate = length2 == 0
        self._wall_width = self.walls[:, 4].astype(np.float64)
        # Unit normal of each wall (left of start->stop), used when a point lies exactly on it.
        normal = np.stack([-self._wall_vector[:, 1], self._wall_vector[:, 0]], axis=1)
        norm = np.linalg.norm(normal, axis=1, keepdims=True)
        self._wall_normal = np.where(norm > 0, normal / np.where(norm > 0, norm, 1), [1.0, 0.0])
        self._max_width = float(self._wall_width.max()) if len(self.walls) else 0.0
        # Plain-Python copies for per-point loops over a few walls (faster than numpy there).
        self._wall_rows = [(float(a[0]), float(a[1]), float(v[0]), float(v[1]), float(l2), bool(d), float(wd),
                            float(n[0]), float(n[1]))
                           for a, v, l2, d, wd, n in zip(self._wall_start, self._wall_vector, self._wall_length2,
                                                         self._wall_degenerate, self._wall_width, self._wall_normal)]

    # -- walls ----------------------------------------------------------------------------------

    def wall_nearest(self, points_xz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nearest points on every wall (N, W, 2) and distances (N, W) for points (N, 2)."""
        p = np.asarray(points_xz, np.float64)[:, None, :]
        t = np.sum((p - self._wall_start) * self._wall_vector, axis=-1) / self._wall_length2
        t = np.where(self._wall_degenerate, 0.0, np.clip(t, 0.0, 1.0))
        nearest = self._wall_start + t[..., None] * self._wall_vector
        return nearest, np.linalg.norm(p - nearest, axis=-1)

    def wall_distance(self, points_xz: np.ndarray) -> np.ndarray:
        return self.wall_nearest(points_xz)[1]

    def push_out_of_walls(self, point_xz) -> tuple[np.ndarray, bool]:
        """Push one point out to at least `width` from every wall, walls in list order (original-demo.md:
        Predicting the future trajectory).

        Fixes two quirks of the original: walls are skipped only when the point is provably
        out of their reach (not by a test on the full segment length), and a point exactly on a
        wall is pushed along the wall's normal instead of dividing by zero.
        """
        p = np.array(point_xz, np.float64)
        if not len(self.walls):
            return p, False
        # A push moves the point by less than the widest wall, so walls farther than twice
        # that cannot be reached by a chain of pushes from nearer walls.
        pushed = self.walls_near(p[None], 2 * self._max_width).push_path(p[None])[0]
        return pushed, bool(np.any(pushed != p))

    def walls_near(self, points_xz: np.ndarray, margin: float) -> "Areas":
        """The walls whose bounding box comes within `margin` (plus their width) of the points' box."""
        low, high = points_xz.min(axis=0) - margin, points_xz.max(axis=0) + margin
        start, stop = self._wall_start, self._wall_start + self._wall_vector
        reach = self._wall_width[:, None]
        close = np.all(np.minimum(start, stop) - reach <= high, axis=1) & \
            np.all(np.maximum(start, stop) + reach >= low, axis=1)
        return self if np.all(close) else Areas(self.walls[close])

    def push_path(self, points_xz: np.ndarray) -> np.ndarray:
        """Push a path's points out of the walls in order, each push carrying all later points
        with it (the cumulative trajectory blend of original-demo.md: Predicting the future trajectory);
        walls in list order per point."""
        rows = self._wall_rows
        out = np.array(points_xz, np.float64)
        shift_x = shift_z = 0.0
        for i in range(len(out)):
            px, pz = out[i, 0] + shift_x, out[i, 1] + shift_z
            x0, z0 = px, pz
            for ax, az, vx, vz, length2, degenerate, width, nx, nz in rows:
                t = 0.0 if degenerate else min(max(((px - ax) * vx + (pz - az) * vz) / length2, 0.0), 1.0)
                qx, qz = ax + t * vx, az + t * vz
                dx, dz = px - qx, pz - qz
                d = math.hypot(dx, dz)
                if d < width:
                    if d > 1e-9:
                        nx, nz = dx / d, dz / d
                    px, pz = qx + width * nx, qz + width * nz
            shift_x += px - x0
            shift_z += pz - z0
            out[i] = px, pz
        return out

    def near_walls(self, points_xz: np.ndarray, tolerance: float = 0.0) -> np.ndarray:
        """Which points (N, 2) are closer than some wall's width (less `tolerance`)."""
        if not len(self.walls):
            return np.zeros(len(points_xz), bool)
        return np.any(self.wall_distance(points_xz) < self._wall_width - tolerance, axis=1)

    def _pairs_within(self, paths_xz: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For paths (N, M, 2): the (path, wall) pairs whose boxes come within `margin` (plus the
        wall's width), and the distances (P, M) from each such path's points to its wall."""
        low, high = paths_xz.min(axis=1), paths_xz.max(axis=1)                     # (N, 2)
        start, stop = self._wall_start, self._wall_start + self._wall_vector
        reach = (self._wall_width + margin)[:, None]
        wall_low, wall_high = np.minimum(start, stop) - reach, np.maximum(start, stop) + reach
        close = np.all((wall_low[None] <= high[:, None]) & (wall_high[None] >= low[:, None]), axis=2)
        paths, walls = np.nonzero(close)
        p = paths_xz[paths].astype(np.float64)                                       # (P, M, 2)
        a, v = self._wall_start[walls, None], self._wall_vector[walls, None]
        t = np.sum((p - a) * v, axis=-1) / self._wall_length2[walls, None]
        t = np.where(self._wall_degenerate[walls, None], 0.0, np.clip(t, 0.0, 1.0))
        return paths, walls, np.linalg.norm(p - (a + t[..., None] * v), axis=-1)

    def paths_near_walls(self, paths_xz: np.ndarray) -> np.ndarray:
        """(N,) which of the paths (N, M, 2) has a point closer than some wall's width."""
        near = np.zeros(len(paths_xz), bool)
        if len(self.walls):
            paths, walls, distance = self._pairs_within(paths_xz, 0.0)
            near[paths[np.any(distance < self._wall_width[walls, None], axis=1)]] = True
        return near

    def bump_weights(self, points_xz: np.ndarray) -> np.ndarray:
        """The bump gait: 1 on a wall's width, fading to 0 over 10 more units (original-demo.md: Areas,
        heights and the input);
        points (M, 2) or paths (N, M, 2)."""
        paths_xz = points_xz if points_xz.ndim == 3 else points_xz[None]
        weights = np.zeros(paths_xz.shape[:2], np.float32)
        if len(self.walls):
            paths, walls, distance = self._pairs_within(paths_xz, BUMP_FADE)
            pair_weights = 1 - np.clip((distance - self._wall_width[walls, None]) / BUMP_FADE, 0, 1)
            np.maximum.at(weights, paths, pair_weights.astype(np.float32))
        return weights if points_xz.ndim == 3 else weights[0]

    # -- jump and crouch areas -----------------------------------------------------------------

    def jump_weights(self, points: np.ndarray) -> np.ndarray:
        """1 within an area's radius, fading to 0 over its falloff; 3-D distance (original-demo.md: Areas,
        heights and the input); points (..., 3)."""
        if not len(self.jumps):
            return np.zeros(points.shape[:-1], np.float32)
        distance = np.linalg.norm(points[..., None, :] - self.jumps[:, 0:3], axis=-1)
        weights = 1 - np.clip((distance - self.jumps[:, 3]) / self.jumps[:, 4], 0, 1)
        return weights.max(axis=-1).astype(np.float32)

    def apply_crouch(self, points: np.ndarray, crouch: np.ndarray) -> np.ndarray:
        """Blend the crouch gait toward the wave ceiling inside crouch areas (original-demo.md: Areas,
        heights and the input); points (..., 3)."""
        crouch = crouch.copy()
        for cx, _cy, cz, size_x, size_z in self.crouches:
            dx = np.abs(points[..., 0] - cx)
            dz = np.abs(points[..., 2] - cz)
            wave = (np.sin(points[..., 0] / CROUCH_WAVE) + 1) / 2
            outside = np.clip(((dx - size_x / 2) + (dz - size_z / 2)) / 100, 0, 1)
            crouch = (1 - wave) + outside * (crouch - (1 - wave))
        return crouch.astype(np.float32)

    def crouch_ceiling(self, x: np.ndarray) -> np.ndarray:
        """Absolute height of the wavy crouch ceiling at world x (130 to 180)."""
        return CROUCH_WAVE * (np.sin(np.asarray(x) / CROUCH_WAVE) + 1) / 2 + 130


@dataclasses.dataclass
class Scene:
    name: str
    display_name: str
    heightmap: Heightmap
    areas: Areas
    start: tuple[float, float]
    description: str = ""
    path: Path | None = None


def _number_rows(value, width: int, key: str, path: Path) -> np.ndarray:
    try:
        array = np.asarray(value if value is not None else [], dtype=np.float64).reshape(-1, width) \
            if value else np.zeros((0, width))
    except (TypeError, ValueError):
        raise SceneError(f"'{key}' must be a list of [{width} numbers] entries", path) from None
    if array.ndim != 2 or array.shape[1] != width:
        raise SceneError(f"'{key}' must be a list of [{width} numbers] entries", path)
    if not np.all(np.isfinite(array)):
        raise SceneError(f"'{key}' holds a non-finite number", path)
    return array


def load_scene_file(path: str | Path) -> Scene:
    path = Path(path)
    if not path.is_file():
        raise SceneError("no such scene file", path)
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SceneError(f"not valid JSON ({error})", path) from None
    if not isinstance(spec, dict):
        raise SceneError("a scene file must hold a JSON object", path)
    for key in ("heightmap", "start"):
        if key not in spec:
            raise SceneError(f"missing '{key}'", path)
    try:
        start = tuple(float(v) for v in spec["start"])
        if len(start) != 2:
            raise ValueError
    except (TypeError, ValueError):
        raise SceneError("'start' must be [x, z]", path) from None
    walls = _number_rows(spec.get("walls"), 5, "walls", path)
    if len(walls) and np.any(walls[:, 4] <= 0):
        raise SceneError("every wall needs a positive width (the 5th number)", path)
    jumps = _number_rows(spec.get("jump_areas"), 5, "jump_areas", path)
    if len(jumps) and np.any(jumps[:, 4] <= 0):
        raise SceneError("every jump area needs a positive falloff (the 5th number)", path)
    crouches = _number_rows(spec.get("crouch_areas"), 5, "crouch_areas", path)
    heightmap_path = (path.parent / str(spec["heightmap"])).resolve()
    try:
        heightmap = Heightmap.load(heightmap_path)
    except HeightmapError as error:
        raise SceneError(f"its heightmap cannot be loaded: {error}", path) from None
    name = str(spec.get("name", path.stem))
    return Scene(name=name, display_name=str(spec.get("display_name", name)), heightmap=heightmap,
                 areas=Areas(walls, jumps, crouches), start=start,
                 description=str(spec.get("description", "")), path=path)


def scene_files(folder: str | Path | None = None) -> dict[str, Path]:
    """Scene name -> file, for every scene in `folder` (default: the shipped heightmaps/), in menu order."""
    folder = Path(folder) if folder else data_dir("heightmaps")
    entries = []
    for file in folder.glob("*.json"):
        try:
            spec = json.loads(file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue  # reported when someone asks for that scene
        if isinstance(spec, dict) and "heightmap" in spec:
            entries.append((spec.get("order", 1000), str(spec.get("name", file.stem)), file))
    return {name: file for _, name, file in sorted(entries)}


def load_scene(name_or_path: str | Path) -> Scene:
    """A shipped scene by name, or any scene file by path."""
    candidate = Path(name_or_path)
    if candidate.suffix.lower() == ".json" or candidate.is_file():
        return load_scene_file(candidate)
    files = scene_files()
    if str(name_or_path) not in files:
        raise SceneError(f"unknown scene {str(name_or_path)!r}; the scenes are: {', '.join(files)}")
    return load_scene_file(files[str(name_or_path)])


def steps_crossing_walls(walls: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(K,) whether each step a[k] -> b[k] ((K, 2) x, z) properly crosses any wall's centre
    segment (walls (W, 5) as in a scene file)."""
    a, b = np.asarray(a, np.float64)[:, None], np.asarray(b, np.float64)[:, None]
    p, q = np.asarray(walls, np.float64)[None, :, 0:2], np.asarray(walls, np.float64)[None, :, 2:4]

    def side(o, u, v):    # sign of (u - o) x (v - o), broadcast over steps and walls
        return np.sign((u[..., 0] - o[..., 0]) * (v[..., 1] - o[..., 1]) - (u[..., 1] - o[..., 1]) * (v[..., 0] - o[..., 0]))

    crossing = (side(a, b, p) * side(a, b, q) < 0) & (side(p, q, a) * side(p, q, b) < 0)
    return np.any(crossing, axis=1)
