"""The 120-frame root trajectories of N characters: 60 past frames, the current one (index 60), 59 predicted.

Positions (N, 120, 3), directions (N, 120, 3), heights (N, 120) and the six gait weights
(N, 120, 6), float32. The methods follow the original order (docs/original-demo.md, "One frame, in order");
each is
vectorised over characters and frames. Wall pushes are the one sequential part (a pushed point
carries all later ones), so they run only for the characters whose path reaches a wall.
"""

from __future__ import annotations

import numpy as np

from .features import (BUMP, CROUCH, FUTURE_SAMPLES, GAITS, JUMP, SAMPLE_STEP, SIDE_FOOTPRINT, side_offsets,
                       write_trajectory_input)
from .rotation import mix_directions, rotate_y, unrotate_y, yaw_of
from .scene import Areas
from .terrain import Heightmap

LENGTH = 120
CURRENT = 60
SAMPLE_FRAMES = np.arange(0, LENGTH, SAMPLE_STEP)              # 0, 10, ..., 110
_CURRENT_SAMPLE = CURRENT // SAMPLE_STEP                        # frame 60 is sample 6
_FUTURE = np.arange(CURRENT + 1, LENGTH)                        # 61 ... 119
_FUTURE_T = ((_FUTURE - CURRENT) / 60.0).astype(np.float32)     # prediction horizon, 1/60 ... 59/60
PUSH_MARGIN = 100.0   # walls this far beyond the predicted path's box can still be reached by pushes
# How fast the predicted future bends toward the stick (original-demo.md: Predicting the future
# trajectory): a frame t seconds ahead keeps (1 - t) ** bias of its old step and direction. Walking
# plainly; strafing and the responsive mode use other biases (Trajectory.predict).
BIAS_POSITION = 0.5
BIAS_DIRECTION = 2.0

# Future frames from the network's 6 samples, linearly interpolated. The original reads past the
# block for frames 111-119 (original-demo.md: Advancing); here they hold the last sample.
_OFFSETS = (_FUTURE - CURRENT) / SAMPLE_STEP
_LOWER = np.minimum(np.floor(_OFFSETS).astype(np.int64), FUTURE_SAMPLES - 1)
_UPPER = np.minimum(_LOWER + 1, FUTURE_SAMPLES - 1)
_MU = (_OFFSETS - np.floor(_OFFSETS)).astype(np.float32)


def bend_shares(bias) -> np.ndarray:
    """How far the predictor bends each future frame (61-119) toward the stick: 1 - (1 - t) ** bias
    for a frame t seconds ahead; (..., 59) for biases (...,)."""
    return 1 - (1 - _FUTURE_T) ** np.asarray(bias)[..., None]


def _interpolate_future(values: np.ndarray) -> np.ndarray:
    """(N, 6) network samples -> (N, 59) values for frames 61-119."""
    return (1 - _MU) * values[:, _LOWER] + _MU * values[:, _UPPER]


class Trajectory:
    """The trajectories of `count` characters, stepped together."""

    # The radius of ground the side height inputs read (features.SIDE_FOOTPRINT; 0: the original's
    # single points).
    side_footprint = SIDE_FOOTPRINT

    def __init__(self, count: int = 1):
        self.count = count
        self.positions = np.zeros((count, LENGTH, 3), np.float32)
        self.directions = np.zeros((count, LENGTH, 3), np.float32)
        self.heights = np.zeros((count, LENGTH), np.float32)
        self.gaits = np.zeros((count, LENGTH, GAITS), np.float32)
        for i in range(count):
            self.reset(i, np.zeros(3, np.float32))

    def reset(self, index, root: np.ndarray) -> None:
        """Character(s) `index` standing at `root`, facing +Z, with no history."""
        self.positions[index] = root
        self.directions[index] = (0.0, 0.0, 1.0)
        self.heights[index] = np.asarray(root)[..., 1, None]
        self.gaits[index] = 0.0

    @property
    def root(self) -> np.ndarray:
        """(N, 3) current roots: horizontal position of frame 60 at the trajectory's mean height."""
        root = self.positions[:, CURRENT].copy()
        root[:, 1] = self.heights[:, CURRENT]
        return root

    @property
    def previous_root(self) -> np.ndarray:
        root = self.positions[:, CURRENT - 1].copy()
        root[:, 1] = self.heights[:, CURRENT - 1]
        return root

    # -- prediction (original-demo.md: Predicting the future trajectory) -------------------------

    def predict(self, target_velocity: np.ndarray, target_direction: np.ndarray, strafe: np.ndarray,
                responsive: np.ndarray, areas: Areas) -> None:
        """Blend the futures toward the target velocities (N, 3) and directions (N, 3), pushing
        them out of walls."""
        strafe = np.asarray(strafe, np.float32)
        bias_position = np.where(responsive, np.float32(2.0), BIAS_POSITION + 0.5 * strafe).astype(np.float32)
        bias_direction = np.where(responsive, 5.0 + (3.0 - 5.0) * strafe,
                                  BIAS_DIRECTION + (0.5 - BIAS_DIRECTION) * strafe).astype(np.float32)
        scale_position, scale_direction = bend_shares(bias_position), bend_shares(bias_direction)

        steps = np.diff(self.positions[:, CURRENT:], axis=1)          # pos[i] - pos[i-1], i = 61..119
        steps += scale_position[..., None] * (target_velocity[:, None, :] - steps)
        blend = self.positions[:, CURRENT, None] + np.cumsum(steps, axis=1, dtype=np.float32)
        if len(areas.walls):
            for i in np.flatnonzero(areas.paths_near_walls(blend[..., [0, 2]])):
                self._collide_cumulative(blend[i], areas)

        self.positions[:, CURRENT + 1:] = blend
        self.directions[:, CURRENT + 1:] = mix_directions(self.directions[:, CURRENT + 1:],
                                                          target_direction[:, None, :], scale_direction)
        self.heights[:, CURRENT + 1:] = self.heights[:, CURRENT, None]
        self.gaits[:, CURRENT + 1:] = self.gaits[:, CURRENT, None]

    @staticmethod
    def _collide_cumulative(blend: np.ndarray, all_areas: Areas) -> None:
        """Wall push inside one character's cumulative blend (59, 3): a pushed point carries all
        later ones with it.

        Only walls near the predicted path take part; if the pushes carried the path near
        another wall, the push is redone with every wall (exact either way).
        """
        path = blend[:, [0, 2]]
        areas = all_areas.walls_near(path, PUSH_MARGIN)
        pushed = areas.push_path(path)
        # Pushed points sit exactly a width away, up to rounding: hence the small tolerance.
        if areas is not all_areas and np.any(all_areas.near_walls(pushed, tolerance=1e-3)):
            pushed = all_areas.push_path(path)
        blend[:, 0], blend[:, 2] = pushed[:, 0], pushed[:, 1]

    # -- areas, heights (original-demo.md: Areas, heights and the input) -------------------------

    def apply_areas_and_heights(self, areas: Areas, terrain: Heightmap) -> None:
        now = slice(CURRENT, LENGTH)
        self.gaits[:, now, JUMP] = areas.jump_weights(self.positions[:, now])
        if len(areas.crouches):
            self.gaits[:, now, CROUCH] = areas.apply_crouch(self.positions[:, now], self.gaits[:, now, CROUCH])
        self.gaits[:, :, BUMP] = areas.bump_weights(self.positions[..., [0, 2]])
        self.positions[:, now, 1] = terrain.sample(self.positions[:, now, 0], self.positions[:, now, 2])
        self.heights[:, CURRENT] = np.mean(self.positions[:, SAMPLE_FRAMES, 1], axis=1)

    # -- network input (original-demo.md: The network's inputs and outputs) ----------------------

    def write_input(self, x: np.ndarray, terrain: Heightmap) -> None:
        """Fill the trajectory parts of the inputs (N, 342) (all but the joints)."""
        root, yaws = self.root, yaw_of(self.directions[:, SAMPLE_FRAMES])   # (N, 12)
        root_yaw = yaws[:, _CURRENT_SAMPLE, None]
        samples = self.positions[:, SAMPLE_FRAMES]
        side = side_offsets(yaws)
        positive, negative = samples + side, samples - side
        ground = root[:, 1, None]
        radius = self.side_footprint
        heights = (terrain.sample_footprint(positive[..., 0], positive[..., 2], radius) - ground,
                   samples[..., 1] - ground,
                   terrain.sample_footprint(negative[..., 0], negative[..., 2], radius) - ground)
        write_trajectory_input(x, unrotate_y(samples - root[:, None], root_yaw),
                               unrotate_y(self.directions[:, SAMPLE_FRAMES], root_yaw),
                               self.gaits[:, SAMPLE_FRAMES], heights)

    # -- advance (original-demo.md: Advancing) ------------------------------------------------------

    def advance(self, root_velocity: np.ndarray, root_turn: np.ndarray, stand_amount: np.ndarray,
                future: dict[str, np.ndarray], areas: Areas) -> None:
        """Shift the history and move the current frames by the network's root motion (N, 2),
        turn (N,), scaled by `stand_amount` (N,); the futures from its samples (N, 6) each."""
        for array in (self.positions, self.directions, self.heights, self.gaits):
            array[:, :CURRENT] = array[:, 1:CURRENT + 1]

        yaw = yaw_of(self.directions[:, CURRENT])
        step = np.zeros((self.count, 3), np.float32)
        step[:, 0], step[:, 2] = root_velocity[:, 0], root_velocity[:, 1]
        stand_amount = np.asarray(stand_amount, np.float32)
        self.positions[:, CURRENT] += stand_amount[:, None] * rotate_y(step[:, None], yaw[:, None])[:, 0]
        self.directions[:, CURRENT] = rotate_y(self.directions[:, CURRENT, None],
                                               (-stand_amount * root_turn)[:, None])[:, 0]
        if len(areas.walls):
            current = self.positions[:, CURRENT]
            for i in np.flatnonzero(areas.paths_near_walls(current[:, None, [0, 2]])):
                pushed, moved = areas.push_out_of_walls(current[i, [0, 2]])
                if moved:
                    current[i, [0, 2]] = pushed

        yaw = yaw_of(self.directions[:, CURRENT])[:, None]
        local = np.zeros((self.count, len(_FUTURE), 3), np.float32)
        local[..., 0] = _interpolate_future(future["future_x"])
        local[..., 1] = self.positions[:, CURRENT + 1:, 1]   # the old height stays, as the original
        local[..., 2] = _interpolate_future(future["future_z"])
        self.positions[:, CURRENT + 1:] = rotate_y(local, yaw) + self.positions[:, CURRENT, None]
        direction = np.zeros((self.count, len(_FUTURE), 3), np.float32)
        direction[..., 0] = _interpolate_future(future["future_direction_x"])
        direction[..., 2] = _interpolate_future(future["future_direction_z"])
        direction = rotate_y(direction, yaw)
        norm = np.linalg.norm(direction, axis=-1, keepdims=True)
        self.directions[:, CURRENT + 1:] = np.where(norm > 1e-9, direction / np.where(norm > 1e-9, norm, 1),
                                                    self.directions[:, CURRENT, None])
