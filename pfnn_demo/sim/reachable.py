"""The ground a character can reach: connected to the scene's start without coming within a wall's
width of a wall (where crowds spawn and wander; what scene checks measure)."""

from __future__ import annotations

import numpy as np
from scipy import ndimage


def reachable_mask(scene) -> np.ndarray:
    """Grid vertices connected to the start without coming within a wall's width of a wall."""
    heightmap, areas = scene.heightmap, scene.areas
    x, z = heightmap.grid_world_xz()
    free = np.ones(heightmap.shape, bool)
    if len(areas.walls):
        points = np.stack([x.ravel(), z.ravel()], axis=1)
        clear = np.ones(len(points), bool)
        for chunk in range(0, len(points), 20000):   # bounded memory: points x walls distances
            distance = areas.wall_distance(points[chunk:chunk + 20000])
            clear[chunk:chunk + 20000] = np.all(distance > areas.walls[:, 4], axis=1)
        free = clear.reshape(heightmap.shape)
    labels, _ = ndimage.label(free)
    i = int(round(scene.start[0] / heightmap.cell_size)) + heightmap.shape[0] // 2
    j = int(round(scene.start[1] / heightmap.cell_size)) + heightmap.shape[1] // 2
    if not (0 <= i < heightmap.shape[0] and 0 <= j < heightmap.shape[1]) or not free[i, j]:
        return np.zeros(heightmap.shape, bool)
    reachable = labels == labels[i, j]
    # A component that touches the grid's edge means the walls leave a way out.
    edge = np.concatenate([reachable[0], reachable[-1], reachable[:, 0], reachable[:, -1]])
    if np.any(edge):
        return np.zeros(heightmap.shape, bool)
    return reachable
