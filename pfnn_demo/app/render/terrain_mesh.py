"""Terrain geometry from a heightmap: one vertex per grid value, normals, baked ambient occlusion."""

from __future__ import annotations

import numpy as np

from ...sim.terrain import Heightmap
from .lighting import terrain_light_srgb

AO_DIRECTIONS = 16      # azimuths of the horizon search
AO_STEPS = (1, 2, 3, 5, 8, 12)   # grid cells along each azimuth


def _shifted(heights: np.ndarray, dx: int, dz: int) -> np.ndarray:
    """heights[i + dx, j + dz] with clamp-to-edge, for the whole grid at once."""
    w, h = heights.shape
    rows = np.clip(np.arange(w) + dx, 0, w - 1)
    cols = np.clip(np.arange(h) + dz, 0, h - 1)
    return heights[rows[:, None], cols[None, :]]


def bake_ambient_occlusion(heightmap: Heightmap) -> np.ndarray:
    """Horizon-based ambient occlusion per grid vertex, in [0, 1] (1 = open sky).

    For each of 16 azimuths the highest elevation angle of the terrain within 12 cells is found;
    the occluded share of a uniform hemisphere below a horizon at elevation phi is sin(phi).
    Whole-grid array shifts, so a 500x500 map bakes in a fraction of a second.
    """
    heights = heightmap.heights.astype(np.float32)
    cell = heightmap.cell_size
    occlusion = np.zeros_like(heights)
    for k in range(AO_DIRECTIONS):
        angle = 2 * np.pi * k / AO_DIRECTIONS
        horizon = np.zeros_like(heights)   # tangent of the elevation angle, at least 0
        for step in AO_STEPS:
            dx, dz = int(round(step * np.cos(angle))), int(round(step * np.sin(angle)))
            if dx == 0 and dz == 0:
                continue
            distance = cell * np.hypot(dx, dz)
            np.maximum(horizon, (_shifted(heights, dx, dz) - heights) / distance, out=horizon)
        occlusion += horizon / np.sqrt(1 + horizon * horizon)   # sin(atan(t))
    return np.clip(1 - occlusion / AO_DIRECTIONS, 0, 1).astype(np.float32)


TILE = 16                     # cells per tile side: the unit of culling and of detail selection
LOD_STEPS = (1, 2, 4, 8)      # grid steps of the detail levels; level 0 is the full resolution
LOD_NEAR = 300.0              # tiles nearer than this (world units) to the camera are full resolution,
FOCUS_RADIUS = 120.0          # and so are tiles this near the character
SKIRT_DEPTH = 25.0            # skirts hang below tile borders so coarser neighbours leave no cracks


class TerrainMesh:
    """Terrain vertices (position, sRGB light in the open and in the character's shadow) and,
    per square tile and detail level, a range of triangle indices.

    Full resolution near the camera, every 2nd/4th/8th grid line farther away, where a grid cell
    covers under a pixel. Each level of a tile carries a skirt along its borders (a strip hanging
    from the border vertices), so neighbouring tiles of different levels join without cracks.
    """

    def __init__(self, heightmap: Heightmap, towards_light: np.ndarray, tile: int = TILE):
        baked, _ = build_terrain_mesh(heightmap, with_indices=False, towards_light=towards_light)
        lit, shadowed = terrain_light_srgb(baked[:, 7], baked[:, 6])
        vertices = np.concatenate([baked[:, :3], lit, shadowed], axis=1)   # position, lit, shadowed
        w, h = heightmap.shape
        grid = np.arange(w * h, dtype=np.int64).reshape(w, h)
        positions = vertices[:, :3].reshape(w, h, 3)
        # Skirt vertices: a lowered copy of every vertex on a tile border.
        on_border = np.zeros((w, h), bool)
        on_border[::tile, :] = on_border[:, ::tile] = True
        on_border[-1, :] = on_border[:, -1] = True
        border_ids = np.flatnonzero(on_border.ravel())
        skirt_index = np.full(w * h, -1, np.int64)
        skirt_index[border_ids] = w * h + np.arange(len(border_ids))
        skirt = vertices[border_ids].copy()
        skirt[:, 1] -= SKIRT_DEPTH
        self.vertices = np.concatenate([vertices, skirt]).astype(np.float32)

        # Index ranges laid out level by level, tiles in row order within a level, so that
        # neighbouring tiles drawn at the same level merge into one range.
        tiles = [(x0, z0, min(x0 + tile, w - 1), min(z0 + tile, h - 1))
                 for x0 in range(0, w - 1, tile) for z0 in range(0, h - 1, tile)]
        parts, offset = [], 0
        first = np.zeros((len(tiles), len(LOD_STEPS)), np.int64)
        count = np.zeros_like(first)
        for level, step in enumerate(LOD_STEPS):
            for number, (x0, z0, x1, z1) in enumerate(tiles):
                xs = np.unique(np.append(np.arange(x0, x1, step), x1))
                zs = np.unique(np.append(np.arange(z0, z1, step), z1))
                triangles = [_grid_triangles(grid[np.ix_(xs, zs)])]
                # Borders at low z and high x run so that one winding faces outward; the others reverse.
                for line, outward in ((grid[xs, z0], True), (grid[xs, z1], False),
                                      (grid[x0, zs], False), (grid[x1, zs], True)):
                    triangles.append(_skirt_triangles(line, skirt_index[line], outward))
                triangles = np.concatenate(triangles)
                parts.append(triangles)
                first[number, level], count[number, level] = offset, triangles.size
                offset += triangles.size
        low = [positions[x0:x1 + 1, z0:z1 + 1].reshape(-1, 3).min(axis=0) - [0, SKIRT_DEPTH, 0]
               for x0, z0, x1, z1 in tiles]
        high = [positions[x0:x1 + 1, z0:z1 + 1].reshape(-1, 3).max(axis=0) for x0, z0, x1, z1 in tiles]
        self.indices = np.concatenate(parts).astype(np.uint32)
        self.tile_first = first                # (tiles, levels)
        self.tile_count = count
        self.tile_low = np.array(low, np.float32)
        self.tile_high = np.array(high, np.float32)
        self.tile_centre = (self.tile_low + self.tile_high) / 2

    def visible_ranges(self, view_projection: np.ndarray, eye=None, detail: bool = True, near_segment=None,
                       near_radius: float = 0.0, focus=None, shadow_segments=None
                       ) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]:
        """Index ranges (first, count) of the tiles inside the clip volume of `view_projection`
        (row-major 4x4), each at the level its distance from `eye` calls for (full resolution within
        FOCUS_RADIUS of the point `focus`), split into the tiles
        within `near_radius` of the horizontal segment `near_segment` ((x0, z0), (x1, z1)) (or of
        any of the segments (S, 2, 2)), those within `near_radius` of one of `shadow_segments`
        (S, 2, 2) but not of `near_segment`, and the others; consecutive ranges are merged. A tile
        is dropped when all 8 corners of its box lie beyond one clip plane."""
        corners = np.stack(np.meshgrid([0, 1], [0, 1], [0, 1], indexing="ij"), -1).reshape(8, 3)
        boxes = self.tile_low[:, None, :] + corners[None] * (self.tile_high - self.tile_low)[:, None, :]
        clip = np.concatenate([boxes, np.ones(boxes.shape[:2] + (1,), np.float32)], -1) @ view_projection.T
        w = clip[..., 3:4]
        outside = np.concatenate([clip[..., :3] < -w, clip[..., :3] > w], -1)   # (tiles, 8, 6)
        visible = np.flatnonzero(~np.any(np.all(outside, axis=1), axis=1))
        if detail and eye is not None:
            distance = np.linalg.norm(self.tile_centre[visible] - np.asarray(eye, np.float32), axis=1)
            level = np.clip(np.floor(np.log2(np.maximum(distance, 1) / LOD_NEAR)) + 1, 0, len(LOD_STEPS) - 1)
            level = level.astype(int)
            if focus is not None:
                point = np.asarray(focus, np.float32)[[0, 2]]
                closest = np.clip(point, self.tile_low[visible][:, [0, 2]], self.tile_high[visible][:, [0, 2]])
                level[np.linalg.norm(closest - point, axis=1) < FOCUS_RADIUS] = 0
        else:
            level = np.zeros(len(visible), int)
        low, high = self.tile_low[visible][:, [0, 2]], self.tile_high[visible][:, [0, 2]]
        near = np.zeros(len(visible), bool)
        if near_segment is not None:
            near = _boxes_near_segment(low, high, np.asarray(near_segment, np.float32), near_radius)
        shadowed = np.zeros(len(visible), bool)
        if shadow_segments is not None and len(shadow_segments):
            shadowed = ~near & _boxes_near_segment(low, high, np.asarray(shadow_segments, np.float32), near_radius)
        first, count = self.tile_first[visible, level], self.tile_count[visible, level]
        rest = ~near & ~shadowed
        return (_merge(first[near], count[near]), _merge(first[shadowed], count[shadowed]),
                _merge(first[rest], count[rest]))


def _boxes_near_segment(low: np.ndarray, high: np.ndarray, segment: np.ndarray, radius: float) -> np.ndarray:
    """Which 2-D boxes come within `radius` of a segment (2, 2), or of any of several (S, 2, 2);
    tested at 9 points along each, inflated by half the spacing (conservative)."""
    segments = segment.reshape(-1, 2, 2)
    t = np.linspace(0, 1, 9)[None, :, None]
    points = (segments[:, :1] + t * (segments[:, 1:] - segments[:, :1])).reshape(-1, 2)       # (S * 9, 2)
    reach = radius + 0.5 * np.max(np.linalg.norm(segments[:, 1] - segments[:, 0], axis=-1)) / 8
    closest = np.clip(points[None], low[:, None], high[:, None])            # (boxes, S * 9, 2)
    return np.any(np.linalg.norm(closest - points[None], axis=-1) < reach, axis=1)


def _merge(starts: np.ndarray, sizes: np.ndarray) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    order = np.argsort(starts, kind="stable")
    for start, size in zip(starts[order], sizes[order]):
        if ranges and ranges[-1][0] + ranges[-1][1] == start:
            ranges[-1] = (ranges[-1][0], ranges[-1][1] + int(size))
        else:
            ranges.append((int(start), int(size)))
    return ranges


def _skirt_triangles(line: np.ndarray, lowered: np.ndarray, outward: bool) -> np.ndarray:
    """A strip between border vertices and their lowered copies, facing out of the tile: a crack
    next to a coarser neighbour then shows one of the two tiles' skirts from either side."""
    a, b, la, lb = line[:-1], line[1:], lowered[:-1], lowered[1:]
    if outward:
        return np.stack([a, b, la, b, lb, la], axis=-1).ravel()
    return np.stack([a, la, b, b, la, lb], axis=-1).ravel()


def _grid_triangles(index: np.ndarray) -> np.ndarray:
    a, b = index[:-1, :-1], index[:-1, 1:]     # (x, z), (x, z+1)
    c, d = index[1:, :-1], index[1:, 1:]       # (x+1, z), (x+1, z+1)
    # Counter-clockwise seen from +Y, as the original: (x,z)(x,z+1)(x+1,z) and (x+1,z+1)(x+1,z)(x,z+1).
    return np.stack([a, b, c, d, c, b], axis=-1).ravel()


def bake_sun_visibility(heightmap: Heightmap, towards_light: np.ndarray) -> np.ndarray:
    """How much of the sun each grid vertex sees, in [0, 1], for a fixed directional light.

    The light never changes direction, so terrain-on-terrain shadows are baked once per scene:
    march from every vertex toward the light and compare the terrain with the ray's height.
    The margin by which the terrain rises above the ray (over 5 units) softens the edge.
    """
    heights = heightmap.heights.astype(np.float32)
    horizontal = np.array([towards_light[0], towards_light[2]], np.float64)
    run = np.linalg.norm(horizontal)
    if run < 1e-6:
        return np.ones_like(heights)
    slope = towards_light[1] / run                      # ray rise per unit of horizontal distance
    span = float(heights.max() - heights.min())
    max_cells = int(min(np.ceil(span / max(slope, 1e-3) / heightmap.cell_size), 400))
    excess = np.zeros_like(heights)
    direction = horizontal / run
    last = None
    for step in range(1, max_cells + 1):
        dx, dz = (int(round(step * direction[0])), int(round(step * direction[1])))
        if (dx, dz) == last:
            continue
        last = (dx, dz)
        ray = heights + slope * heightmap.cell_size * np.hypot(dx, dz)
        np.maximum(excess, _shifted(heights, dx, dz) - ray, out=excess)
    return np.clip(1 - excess / 5.0, 0, 1).astype(np.float32)


def build_terrain_mesh(heightmap: Heightmap, with_indices: bool = True,
                       towards_light: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Interleaved vertices (N, 8: position, normal, ao, sun) and triangle indices (uint32).

    `sun` is the static direct light: the cosine to the light times the baked sun visibility.
    """
    w, h = heightmap.shape
    vertices = np.empty((w, h, 8), np.float32)
    vertices[..., 0], vertices[..., 2] = heightmap.grid_world_xz()
    vertices[..., 1] = heightmap.heights
    vertices[..., 3:6] = heightmap.grid_normals()
    vertices[..., 6] = bake_ambient_occlusion(heightmap)
    towards_light = np.array([0.0, 1.0, 0.0]) if towards_light is None else np.asarray(towards_light, np.float64)
    towards_light = towards_light / np.linalg.norm(towards_light)
    cosine = np.clip(vertices[..., 3:6] @ towards_light.astype(np.float32), 0, 1)
    vertices[..., 7] = cosine * bake_sun_visibility(heightmap, towards_light)
    if not with_indices:
        return vertices.reshape(-1, 8), None
    index = np.arange(w * h, dtype=np.uint32).reshape(w, h)
    return vertices.reshape(-1, 8), _grid_triangles(index).astype(np.uint32)
