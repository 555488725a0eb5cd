"""What N characters ask for in one tick, as arrays, and the smoothing that turns it into targets.

A player's `InputState` becomes one row (its stick is relative to the camera, so the row carries
the camera's yaw); a crowd's behaviour fills the other rows directly.
"""

from __future__ import annotations

import dataclasses
import numpy as np

from .input_state import STICK_DEAD_ZONE, InputState
from .rotation import mix_directions, rotate_y
from .features import CROUCH, JOG, STAND, WALK

# Weight of the new value in each per-frame blend (original-demo.md: Controls and smoothing).
DIRECTION_SMOOTH = 0.9
VELOCITY_SMOOTH = 0.9
STRAFE_SMOOTH = 0.9
CROUCHED_SMOOTH = 0.9
GAIT_SMOOTH = 0.1
WALK_SPEED, JOG_EXTRA = 2.5, 5.0   # units per frame at full stick, plus this much at full jog trigger


def camera_forward(camera_yaw: np.ndarray) -> np.ndarray:
    """Unit horizontal viewing directions (N, 3) of cameras at `camera_yaw` (N,): 'stick forward'."""
    forward = np.zeros(np.shape(camera_yaw) + (3,), np.float32)
    forward[..., 0] = -np.cos(camera_yaw)
    forward[..., 2] = np.sin(camera_yaw)
    return forward


def camera_yaw_facing(direction_xz: np.ndarray) -> np.ndarray:
    """The camera yaw (N,) whose 'stick forward' is the world direction (N, 2) (x, z)."""
    return np.arctan2(direction_xz[..., 1], -direction_xz[..., 0])


@dataclasses.dataclass
class Controls:
    move: np.ndarray          # (N, 2) left stick, x right, y forward, relative to the camera
    camera_yaw: np.ndarray    # (N,) the camera each stick is relative to
    strafe: np.ndarray        # (N,) left trigger in [0, 1]
    jog: np.ndarray           # (N,) right trigger in [0, 1]
    crouch: np.ndarray        # (N,) bool
    responsive: np.ndarray    # (N,) bool
    ik: np.ndarray            # (N,) bool: foot IK on

    @classmethod
    def still(cls, count: int) -> "Controls":
        """Everyone standing, foot IK on."""
        return cls(np.zeros((count, 2)), np.zeros(count), np.zeros(count), np.zeros(count),
                   np.zeros(count, bool), np.zeros(count, bool), np.ones(count, bool))

    def __len__(self) -> int:
        return len(self.camera_yaw)

    def set_player(self, index: int, state: InputState, camera_yaw: float) -> None:
        """Row `index` from a player's input, seen through a camera at `camera_yaw`."""
        self.move[index] = state.move_x, state.move_y
        self.camera_yaw[index] = camera_yaw
        self.strafe[index], self.jog[index] = state.strafe, state.jog
        self.crouch[index], self.responsive[index], self.ik[index] = state.crouch, state.responsive, state.ik

    def dead_zoned_move(self) -> np.ndarray:
        """The original's dead zone: |x| + |y| below the threshold zeroes both axes."""
        return np.where((np.abs(self.move).sum(axis=1) < STICK_DEAD_ZONE)[:, None], 0.0, self.move)


def update_targets(targets, controls: Controls) -> None:
    """Target velocity and direction, strafe and crouch amounts of every character (original-demo.md: From
    the stick to a target).
    `targets` has target_velocity (N, 3), target_direction (N, 3), strafe_amount (N,),
    crouched_amount (N,), responsive (N,)."""
    forward = camera_forward(controls.camera_yaw)
    move = controls.dead_zoned_move()
    speed = WALK_SPEED + JOG_EXTRA * np.asarray(controls.jog, np.float64)
    stick = np.zeros((len(controls), 3))
    stick[:, 0], stick[:, 2] = -move[:, 0], move[:, 1]
    wanted = (speed[:, None] * rotate_y(stick, np.arctan2(forward[:, 0], forward[:, 2]))).astype(np.float32)
    targets.target_velocity += VELOCITY_SMOOTH * (wanted - targets.target_velocity)

    targets.strafe_amount += STRAFE_SMOOTH * (controls.strafe - targets.strafe_amount)
    length = np.linalg.norm(targets.target_velocity, axis=1, keepdims=True)
    velocity_direction = np.where(length < 1e-5, targets.target_direction,
                                  targets.target_velocity / np.where(length < 1e-5, 1.0, length))
    wanted_direction = mix_directions(velocity_direction, forward, targets.strafe_amount)
    targets.target_direction[:] = mix_directions(targets.target_direction, wanted_direction, DIRECTION_SMOOTH)

    targets.crouched_amount += CROUCHED_SMOOTH * (controls.crouch - targets.crouched_amount)
    targets.responsive[:] = controls.responsive


def gait_goals(target_velocity: np.ndarray, crouched_amount: np.ndarray, jog: np.ndarray) -> np.ndarray:
    """(N, 6) the gait each character is heading for: stand, crouch, jog or walk (original-demo.md: Gait)."""
    speed = np.linalg.norm(target_velocity, axis=1)
    goal = np.zeros((len(speed), 6), np.float32)
    standing = speed < 0.1
    crouching = ~standing & (crouched_amount > 0.1)
    jogging = ~standing & ~crouching & (np.asarray(jog) != 0.0)
    goal[:, STAND] = np.where(standing, 1.0 - np.clip(speed / 0.1, 0.0, 1.0), 0.0)
    goal[:, CROUCH] = np.where(crouching, crouched_amount, 0.0)
    goal[:, JOG] = jogging
    goal[:, WALK] = ~standing & ~crouching & ~jogging
    return goal

