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

from ..sim.reachable import reachable_mask

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
