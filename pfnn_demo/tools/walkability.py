"""What ground the network can walk on, and a check of a scene against it.

Limits (world units, about 1 cm), measured where the character can go:
  MAX_SLOPE  rise over a 25-unit run, the spacing of the network's side terrain samples: 0.6
             (31 degrees). The original training terrain stays below this nearly everywhere.
  MAX_STEP   height change between neighbouring grid vertices (3.94 units apart): 12, a low stair
             step. Steeper ground must be fenced off by walls.
Jump areas are exempt up to JUMP_HEIGHT (the obstacles the character jumps over).
"Where the character can go" is the ground connected to the start position and farther than a
wall's width from every wall.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import ndimage

MAX_SLOPE = 0.6
MAX_STEP = 12.0
SLOPE_RUN = 25.0
JUMP_HEIGHT = 40.0


@dataclasses.dataclass
class WalkabilityReport:
    reachable_fraction: float
    worst_slope: float
    worst_step: float
    start_inside: bool

    @property
    def ok(self) -> bool:
        return self.start_inside and self.worst_slope <= MAX_SLOPE and self.worst_step <= MAX_STEP

    def __str__(self) -> str:
        return (f"reachable {self.reachable_fraction:.0%} of the map, worst slope {self.worst_slope:.2f} "
                f"(limit {MAX_SLOPE}), worst step {self.worst_step:.1f} (limit {MAX_STEP}), "
                f"start {'inside' if self.start_inside else 'OUTSIDE'} the walls")


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


def check_scene(scene) -> WalkabilityReport:
    heightmap = scene.heightmap
    reachable = reachable_mask(scene)
    if not reachable.any():
        return WalkabilityReport(0.0, float("inf"), float("inf"), False)
    heights = heightmap.heights.astype(np.float64)
    cells = max(int(round(SLOPE_RUN / heightmap.cell_size)), 1)
    slope = np.zeros_like(heights)
    step = np.zeros_like(heights)
    for axis in (0, 1):
        far = np.abs(np.roll(heights, -cells, axis=axis) - heights) / (cells * heightmap.cell_size)
        near = np.abs(np.roll(heights, -1, axis=axis) - heights)
        slope = np.maximum(slope, far)
        step = np.maximum(step, near)
    # Only pairs of vertices that are both reachable count (np.roll wraps; the mask drops those).
    mask = reachable & np.roll(reachable, -cells, 0) & np.roll(reachable, -cells, 1)
    mask &= np.roll(reachable, -1, 0) & np.roll(reachable, -1, 1)
    if len(scene.areas.jumps):
        x, z = heightmap.grid_world_xz()
        near_jump = np.zeros(heightmap.shape, bool)
        for jx, _jy, jz, radius, _falloff in scene.areas.jumps:
            near_jump |= np.hypot(x - jx, z - jz) < radius + SLOPE_RUN   # the run may start just outside
        exempt = near_jump & (heights <= JUMP_HEIGHT)
        mask &= ~exempt
    return WalkabilityReport(float(reachable.mean()), float(slope[mask].max(initial=0)),
                             float(step[mask].max(initial=0)), True)
