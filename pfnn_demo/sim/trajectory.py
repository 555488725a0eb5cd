"""The 120-frame root trajectory: 60 past frames, the current one (index 60), 59 predicted.

Positions, directions, heights and the six gait weights per frame, as float32 arrays. The
methods follow the original order (spec 6.2, 6.5, 6.6, 6.8); each is vectorised over frames.
"""

from __future__ import annotations

import numpy as np

from .features import FUTURE_SAMPLES, GAITS, INPUT, SAMPLE_STEP, SIDE_OFFSET
from .rotation import mix_directions, rotate_y, unrotate_y, yaw_of
from .scene import Areas
from .terrain import Heightmap

LENGTH = 120
CURRENT = 60
STAND, WALK, JOG, CROUCH, JUMP, BUMP = range(GAITS)
SAMPLE_FRAMES = np.arange(0, LENGTH, SAMPLE_STEP)              # 0, 10, ..., 110
_FUTURE = np.arange(CURRENT + 1, LENGTH)                        # 61 ... 119
_FUTURE_T = ((_FUTURE - CURRENT) / 60.0).astype(np.float32)     # prediction horizon, 1/60 ... 59/60
PUSH_MARGIN = 100.0   # walls this far beyond the predicted path's box can still be reached by pushes


class Trajectory:
    def __init__(self):
        self.positions = np.zeros((LENGTH, 3), np.float32)
        self.directions = np.zeros((LENGTH, 3), np.float32)
        self.heights = np.zeros(LENGTH, np.float32)
        self.gaits = np.zeros((LENGTH, GAITS), np.float32)
        self.reset(np.zeros(3, np.float32))

    def reset(self, root: np.ndarray) -> None:
        self.positions[:] = root
        self.directions[:] = (0.0, 0.0, 1.0)
        self.heights[:] = root[1]
        self.gaits[:] = 0.0

    @property
    def yaws(self) -> np.ndarray:
        return yaw_of(self.directions)

    @property
    def root(self) -> np.ndarray:
        """The current root: horizontal position of frame 60 at the trajectory's mean height."""
        return np.array([self.positions[CURRENT, 0], self.heights[CURRENT], self.positions[CURRENT, 2]], np.float32)

    @property
    def previous_root(self) -> np.ndarray:
        p = self.positions[CURRENT - 1]
        return np.array([p[0], self.heights[CURRENT - 1], p[2]], np.float32)

    # -- prediction (spec 6.5) ------------------------------------------------------------------

    def predict(self, target_velocity: np.ndarray, target_direction: np.ndarray, strafe: float,
                responsive: bool, areas: Areas) -> None:
        """Blend the future toward the target velocity and direction, pushing it out of walls."""
        if responsive:
            bias_position, bias_direction = 2.0, 5.0 + (3.0 - 5.0) * strafe
        else:
            bias_position, bias_direction = 0.5 + 0.5 * strafe, 2.0 + (0.5 - 2.0) * strafe
        scale_position = 1 - (1 - _FUTURE_T) ** np.float32(bias_position)
        scale_direction = 1 - (1 - _FUTURE_T) ** np.float32(bias_direction)

        steps = np.diff(self.positions[CURRENT:], axis=0)                    # pos[i] - pos[i-1], i = 61..119
        steps += scale_position[:, None] * (target_velocity[None, :] - steps)
        blend = self.positions[CURRENT] + np.cumsum(steps, axis=0, dtype=np.float32)
        if len(areas.walls):
            self._collide_cumulative(blend, areas)

        self.positions[CURRENT + 1:] = blend
        self.directions[CURRENT + 1:] = mix_directions(self.directions[CURRENT + 1:], target_direction,
                                                       scale_direction)
        self.heights[CURRENT + 1:] = self.heights[CURRENT]
        self.gaits[CURRENT + 1:] = self.gaits[CURRENT]

    @staticmethod
    def _collide_cumulative(blend: np.ndarray, all_areas: Areas) -> None:
        """Wall push inside the cumulative blend: a pushed point carries all later ones with it.

        Only walls near the predicted path take part; if the pushes carried the path near
        another wall, the push is redone with every wall (exact either way).
        """
        path = blend[:, [0, 2]]
        if not np.any(all_areas.near_walls(path)):
            return
        areas = all_areas.walls_near(path, PUSH_MARGIN)
        pushed = areas.push_path(path)
        # Pushed points sit exactly a width away, up to rounding: hence the small tolerance.
        if areas is not all_areas and np.any(all_areas.near_walls(pushed, tolerance=1e-3)):
            pushed = all_areas.push_path(path)
        blend[:, 0], blend[:, 2] = pushed[:, 0], pushed[:, 1]

    # -- areas, heights (spec 6.6 steps 1-5) -----------------------------------------------------

    def apply_areas_and_heights(self, areas: Areas, terrain: Heightmap) -> None:
        now = slice(CURRENT, LENGTH)
        self.gaits[now, JUMP] = areas.jump_weights(self.positions[now])
        if len(areas.crouches):
            self.gaits[now, CROUCH] = areas.apply_crouch(self.positions[now], self.gaits[now, CROUCH])
        self.gaits[:, BUMP] = areas.bump_weights(self.positions[:, [0, 2]])
        self.positions[now, 1] = terrain.sample(self.positions[now, 0], self.positions[now, 2])
        self.heights[CURRENT] = np.mean(self.positions[SAMPLE_FRAMES, 1])

    # -- network input (spec 5.3) ----------------------------------------------------------------

    def write_input(self, x: np.ndarray, terrain: Heightmap) -> None:
        """Fill the trajectory parts of the input vector (all but the joints)."""
        root, yaws = self.root, self.yaws
        root_yaw = yaws[CURRENT]
        samples = self.positions[SAMPLE_FRAMES]
        local = unrotate_y(samples - root, root_yaw)
        x[INPUT["trajectory_x"]] = local[:, 0]
        x[INPUT["trajectory_z"]] = local[:, 2]
        local_dir = unrotate_y(self.directions[SAMPLE_FRAMES], root_yaw)
        x[INPUT["direction_x"]] = local_dir[:, 0]
        x[INPUT["direction_z"]] = local_dir[:, 2]
        gaits = self.gaits[SAMPLE_FRAMES].T.copy()
        gaits[BUMP] = 0.0  # the original demo feeds 0 for the bump channel (spec 5.3)
        x[INPUT["gaits"]] = gaits.ravel()
        side = rotate_y(np.array([SIDE_OFFSET, 0.0, 0.0], np.float32), yaws[SAMPLE_FRAMES])
        positive, negative = samples + side, samples - side
        x[INPUT["height_side_pos"]] = terrain.sample(positive[:, 0], positive[:, 2]) - root[1]
        x[INPUT["height_centre"]] = samples[:, 1] - root[1]
        x[INPUT["height_side_neg"]] = terrain.sample(negative[:, 0], negative[:, 2]) - root[1]

    # -- advance (spec 6.8 steps 1-6) ------------------------------------------------------------

    def advance(self, root_velocity: np.ndarray, root_turn: float, stand_amount: float,
                future: dict[str, np.ndarray], areas: Areas) -> None:
        for array in (self.positions, self.directions, self.heights, self.gaits):
            array[:CURRENT] = array[1:CURRENT + 1]

        yaw = float(self.yaws[CURRENT])
        step = np.array([root_velocity[0], 0.0, root_velocity[1]], np.float32)
        self.positions[CURRENT] += stand_amount * rotate_y(step, yaw)
        self.directions[CURRENT] = rotate_y(self.directions[CURRENT], -stand_amount * root_turn)
        if len(areas.walls):
            pushed, moved = areas.push_out_of_walls(self.positions[CURRENT, [0, 2]])
            if moved:
                self.positions[CURRENT, [0, 2]] = pushed

        # Future frames from the network's 6 samples, linearly interpolated. The original reads
        # past the block for frames 111-119 (spec 6.8 quirk 9); here they hold the last sample.
        yaw = float(yaw_of(self.directions[CURRENT]))
        offsets = (_FUTURE - CURRENT) / SAMPLE_STEP
        lower = np.minimum(np.floor(offsets).astype(np.int64), FUTURE_SAMPLES - 1)
        upper = np.minimum(lower + 1, FUTURE_SAMPLES - 1)
        mu = (offsets - np.floor(offsets)).astype(np.float32)

        def interpolate(values: np.ndarray) -> np.ndarray:
            return (1 - mu) * values[lower] + mu * values[upper]

        local = np.zeros((len(_FUTURE), 3), np.float32)
        local[:, 0] = interpolate(future["future_x"])
        local[:, 1] = self.positions[CURRENT + 1:, 1]   # the old height stays, as the original
        local[:, 2] = interpolate(future["future_z"])
        self.positions[CURRENT + 1:] = rotate_y(local, yaw) + self.positions[CURRENT]
        direction = np.zeros((len(_FUTURE), 3), np.float32)
        direction[:, 0] = interpolate(future["future_direction_x"])
        direction[:, 2] = interpolate(future["future_direction_z"])
        direction = rotate_y(direction, yaw)
        norm = np.linalg.norm(direction, axis=1, keepdims=True)
        self.directions[CURRENT + 1:] = np.where(norm > 1e-9, direction / np.where(norm > 1e-9, norm, 1),
                                                 self.directions[CURRENT])
