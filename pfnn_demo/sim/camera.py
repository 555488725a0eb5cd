"""The orbit camera (original-demo.md: Camera): yaw, pitch, distance around a target that follows the character.

Part of the simulation because movement is camera-relative; the renderer only reads it.
"""

from __future__ import annotations

import math

from pyglm import glm

PITCH_MIN, PITCH_MAX = math.pi / 16, 2 * math.pi / 5
DISTANCE_MIN, DISTANCE_MAX = 10.0, 10000.0
TURN_RATE = 0.03      # radians per frame at full stick
ZOOM_RATE = 20.0      # units per frame held
FOLLOW = 0.1          # target easing per frame
TARGET_HEIGHT = 100.0


class OrbitCamera:
    def __init__(self, yaw: float = 0.0, pitch: float = math.pi / 6, distance: float = 300.0):
        self.yaw = yaw
        self.pitch = pitch
        self.distance = distance
        self.target = glm.vec3(0.0)
        self.invert_y = False

    def update(self, look_x: float, look_y: float, zoom: float) -> None:
        """Right stick turns and tilts; zoom > 0 moves away (original-demo.md: Camera)."""
        tilt = look_y if self.invert_y else -look_y  # stick up tilts the view down, as the original
        self.pitch = min(max(self.pitch + tilt * TURN_RATE, PITCH_MIN), PITCH_MAX)
        self.yaw += look_x * TURN_RATE
        self.distance = min(max(self.distance + zoom * ZOOM_RATE, DISTANCE_MIN), DISTANCE_MAX)

    @property
    def position(self) -> glm.vec3:
        offset = glm.vec3(glm.rotate(glm.mat4(1.0), self.yaw, glm.vec3(0, 1, 0)) * glm.vec4(self.distance, 0, 0, 0))
        axis = glm.normalize(glm.cross(offset, glm.vec3(0, 1, 0)))
        offset = glm.vec3(glm.rotate(glm.mat4(1.0), self.pitch, axis) * glm.vec4(offset, 0))
        return self.target + offset

    def follow(self, root_x: float, root_height: float, root_z: float) -> None:
        self.target = glm.mix(self.target, glm.vec3(root_x, root_height + TARGET_HEIGHT, root_z), FOLLOW)

    def view_matrix(self) -> glm.mat4:
        return glm.lookAt(self.position, self.target, glm.vec3(0, 1, 0))
