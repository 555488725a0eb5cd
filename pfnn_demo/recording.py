"""Recordings of a simulation: one .npz of per-frame arrays (documented in the README).

Keys (T frames, lengths in the demo's units of about 1 cm, y up):
  fps                    ()          frames per second (60)
  root_position          (T, 3)      trajectory frame 60 after the step's advance
  root_direction         (T, 3)      unit facing direction of the root
  joint_positions        (T, 31, 3)  world joint positions after foot IK (what is drawn)
  joint_positions_raw    (T, 31, 3)  the network's pose before IK
  joint_rotations        (T, 31, 3, 3) world joint rotations after IK
  contacts               (T, 4)      left heel, left toe, right heel, right toe, in [0, 1]
  phase                  (T,)        phase after the step, radians in [0, 2*pi)
  gait                   (T, 6)      stand, walk, jog, crouch, jump, bump at the current frame
  stick                  (T, 2)      left stick (x right, y forward) as given
  trigger                (T, 2)      left (strafe) and right (jog) triggers
  target_velocity        (T, 3)      the controller's smoothed target velocity
  joint_names, parents   (31,)       the skeleton
  scene, mode, network   ()          scene name, network mode, network provenance
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .skeleton import JOINT_NAMES, PARENTS

FPS = 60


class Recorder:
    def __init__(self):
        self._frames: dict[str, list] = {key: [] for key in (
            "root_position", "root_direction", "joint_positions", "joint_positions_raw", "joint_rotations",
            "contacts", "phase", "gait", "stick", "trigger", "target_velocity")}

    def __len__(self) -> int:
        return len(self._frames["phase"])

    def capture(self, controller, controls) -> None:
        frames = self._frames
        frames["root_position"].append(controller.root_position)
        frames["root_direction"].append(controller.root_direction)
        frames["joint_positions"].append(controller.joint_positions_final.copy())
        frames["joint_positions_raw"].append(np.array(controller.joint_positions_raw, np.float32))
        frames["joint_rotations"].append(controller.global_transforms[:, :3, :3].copy())
        frames["contacts"].append(controller.contacts.copy())
        frames["phase"].append(controller.phase)
        frames["gait"].append(controller.gait)
        frames["stick"].append((controls.move_x, controls.move_y))
        frames["trigger"].append((controls.strafe, controls.jog))
        frames["target_velocity"].append(tuple(controller.target_velocity))

    def arrays(self) -> dict[str, np.ndarray]:
        return {key: np.asarray(values, np.float32) for key, values in self._frames.items()}

    def save(self, path: str | Path, scene: str, mode: str, network: str) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, fps=np.int32(FPS), joint_names=np.array(JOINT_NAMES), parents=PARENTS,
                            scene=np.str_(scene), mode=np.str_(mode), network=np.str_(network), **self.arrays())
        return path
