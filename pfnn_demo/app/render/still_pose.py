"""A single pose to draw without a simulation: a frame of a motion clip standing in a scene."""

from __future__ import annotations

import dataclasses

import numpy as np
from pyglm import glm

from ...sim.camera import OrbitCamera
from ...errors import PfnnError
from ...sim.scene import Scene
from ...sim.skeleton import BVH_TO_DEMO_UNITS, CONTACT_JOINTS, JOINT_NAMES


@dataclasses.dataclass
class StillPose:
    """What the renderer reads from a controller, for one fixed pose (no trajectory, no HUD)."""

    scene: Scene
    camera: OrbitCamera
    global_transforms: np.ndarray     # (31, 4, 4)

    trajectory = crowd_trajectory = trajectory_samples = contacts = joint_velocities = None

    def drawn_transforms(self) -> np.ndarray:
        return self.global_transforms[None]

    @property
    def joint_positions(self) -> np.ndarray:
        return self.global_transforms[:, :3, 3]

    @classmethod
    def from_motion(cls, motion, frame: int, scene: Scene) -> "StillPose":
        if list(motion.names) != list(JOINT_NAMES):
            raise PfnnError("the clip's hierarchy is not the 31-joint CMU one the character is built on")
        pose = motion.global_transforms(BVH_TO_DEMO_UNITS)[frame].astype(np.float32)
        # Stand the clip's root on the scene's start, its lowest foot on the ground.
        start_x, start_z = scene.start
        pose[:, 0, 3] += start_x - pose[0, 0, 3]
        pose[:, 2, 3] += start_z - pose[0, 2, 3]
        feet = pose[CONTACT_JOINTS, :3, 3]
        ground = scene.heightmap.sample(feet[:, 0], feet[:, 2])
        pose[:, 1, 3] += float(np.min(ground - feet[:, 1] + [7.0, 3.0, 7.0, 3.0]))
        camera = OrbitCamera()
        camera.target = glm.vec3(float(pose[0, 0, 3]), float(pose[0, 1, 3]), float(pose[0, 2, 3]))
        return cls(scene, camera, pose)
