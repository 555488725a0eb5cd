"""A recording played back in time: the pose of any frame, as the renderer reads a controller.

Headless (no pygame, no moderngl): the replay window and `screenshot --replay` both draw it.
"""

from __future__ import annotations

import math

import numpy as np
from pyglm import glm

from ..sim.camera import TARGET_HEIGHT, OrbitCamera
from ..sim.recording import INPUT_COLUMNS, Recording
from ..sim.scene import Scene

SPEEDS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0)


class Playback:
    """Frame `frame` of `recording` standing in `scene`, with play, pause, stepping and speed."""

    def __init__(self, recording: Recording, scene: Scene):
        if recording.frames == 0:
            raise ValueError("the recording holds no frames")
        self.recording = recording
        self.scene = scene
        self.camera = OrbitCamera()
        self.frame_time = float(recording.arrays["frame_time"])
        self.frames = recording.frames
        self.paused = False
        self.speed = 1.0
        self.time = 0.0
        self.frame = 0
        self._transforms = recording.global_transforms()
        inputs = recording.arrays.get("inputs")
        if inputs is not None and len(inputs):     # start where the player's camera looked
            self.camera.yaw = float(inputs[0, INPUT_COLUMNS.index("camera_yaw")])
            self.camera.pitch = float(inputs[0, INPUT_COLUMNS.index("camera_pitch")])
        self.seek(0)
        self.camera.target = self._camera_goal()

    # -- what the renderer reads ------------------------------------------------------------------

    trajectory = crowd_trajectory = joint_velocities = None     # a recording holds the samples only

    def drawn_transforms(self) -> np.ndarray:
        return self._transforms[self.frame][None]

    @property
    def global_transforms(self) -> np.ndarray:
        return self._transforms[self.frame]

    @property
    def joint_positions(self) -> np.ndarray:
        return self._transforms[self.frame, :, :3, 3]

    def _per_frame(self, key: str):
        values = self.recording.arrays.get(key)
        return None if values is None else values[self.frame]

    @property
    def contacts(self) -> np.ndarray | None:
        return self._per_frame("contacts")

    @property
    def phase(self) -> float | None:
        phase = self._per_frame("phase")
        return None if phase is None else float(phase)

    @property
    def trajectory_samples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        arrays = self.recording.arrays
        if "trajectory_positions" not in arrays:
            return None
        return tuple(arrays[key][self.frame] for key in
                     ("trajectory_positions", "trajectory_directions", "trajectory_gaits"))

    # -- time ---------------------------------------------------------------------------------------

    @property
    def duration(self) -> float:
        return self.frames * self.frame_time

    def seek(self, frame: int) -> None:
        self.frame = int(frame) % self.frames
        self.time = self.frame * self.frame_time

    def step(self, frames: int) -> None:
        """Move by whole frames (wrapping), pausing playback."""
        self.paused = True
        self.seek(self.frame + frames)

    def change_speed(self, steps: int) -> None:
        index = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - self.speed))
        self.speed = SPEEDS[min(max(index + steps, 0), len(SPEEDS) - 1)]

    def advance(self, seconds: float) -> None:
        """Play on by `seconds` of wall time at the current speed, looping at the end; the camera follows."""
        if not self.paused:
            self.time = (self.time + seconds * self.speed) % self.duration
            self.frame = min(int(math.floor(self.time / self.frame_time + 1e-9)), self.frames - 1)
        self.camera.target = glm.mix(self.camera.target, self._camera_goal(), min(1.0, 6.0 * seconds))

    def _camera_goal(self) -> glm.vec3:
        hips = self.joint_positions[0]
        ground = self.scene.heightmap.height_at(float(hips[0]), float(hips[2]))
        return glm.vec3(float(hips[0]), float(ground) + TARGET_HEIGHT, float(hips[2]))
