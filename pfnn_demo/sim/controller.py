"""The player's character: a crowd's character 0, driven by an InputState through an orbit camera.

With `characters=1` (the default) this is the single-character controller of the original demo;
with more, the others are stepped in the same batch from the Controls given for them. The
attributes read the player's character (views into the crowd's arrays).
Headless and deterministic; imports neither pygame nor moderngl.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from pyglm import glm

from .camera import OrbitCamera
from .controls import Controls
from .crowd import Crowd
from .input_state import InputState
from .phase_network import PhaseFunctionedNetwork
from .scene import Scene
from .trajectory import CURRENT, SAMPLE_FRAMES

PLAYER = 0


@dataclasses.dataclass
class Pose:
    """One frame of the character, in world space (demo units of about 1 cm, y up); copies."""

    joint_positions: np.ndarray        # (31, 3) as drawn: after foot IK
    joint_rotations: np.ndarray        # (31, 3, 3) world rotation of each joint
    contacts: np.ndarray               # (4,) left heel, left toe, right heel, right toe, in [0, 1]
    phase: float                       # gait phase in radians, [0, 2 pi)
    gait: np.ndarray                   # (6,) stand, walk, jog, crouch, jump, bump
    root_position: np.ndarray          # (3,) on the ground under the character
    root_direction: np.ndarray         # (3,) unit facing direction
    trajectory_positions: np.ndarray   # (12, 3) every 10th frame of the trajectory: 6 past, now, 5 predicted
    trajectory_directions: np.ndarray  # (12, 3)


class TrajectoryView:
    """One character's trajectory: views (120, ...) into the crowd's arrays."""

    def __init__(self, trajectory, index: int):
        self.positions = trajectory.positions[index]
        self.directions = trajectory.directions[index]
        self.heights = trajectory.heights[index]
        self.gaits = trajectory.gaits[index]


class Controller:
    def __init__(self, network: PhaseFunctionedNetwork, scene: Scene, use_heel_contacts: bool | None = None,
                 characters: int = 1, starts: np.ndarray | None = None, keep_bone_lengths: bool = True,
                 start_pose: str = "settled", original_ik: bool = False):
        """The player at the scene's start (or `starts[0]`); `characters - 1` more at `starts[1:]`.
        `keep_bone_lengths`: draw the network's poses on the rest bone lengths; `start_pose`: start
        in the network's mean pose (the original demo) or the standing pose it settles into;
        `original_ik`: the original demo's foot IK (Crowd)."""
        self.camera = OrbitCamera()
        self.crowd = Crowd(network, scene, characters, use_heel_contacts, starts, keep_bone_lengths, start_pose,
                           original_ik)
        self.controls = Controls.still(characters)
        self.last_controls = self.controls   # the rows of the last step (recordings read them)
        self.trajectory = TrajectoryView(self.crowd.trajectory, PLAYER)

    @property
    def network(self) -> PhaseFunctionedNetwork:
        return self.crowd.network

    @property
    def scene(self) -> Scene:
        return self.crowd.scene

    @property
    def characters(self) -> int:
        return self.crowd.count

    def load_scene(self, scene: Scene, starts: np.ndarray | None = None) -> None:
        self.crowd.load_scene(scene, starts)

    def reset(self, start: tuple[float, float]) -> None:
        """Put the player at `start`, standing (in the network's mean pose with start_pose="mean")."""
        self.crowd.reset(PLAYER, start)

    def step(self, controls: InputState, others: Controls | None = None) -> None:
        """Advance by one 1/60 s tick: the player by `controls`, the other characters by `others`
        (rows 1 ... N-1 are used; by default they stand)."""
        camera = self.camera
        if controls.camera_yaw is not None or controls.camera_pitch is not None:
            camera.yaw = camera.yaw if controls.camera_yaw is None else controls.camera_yaw
            camera.pitch = camera.pitch if controls.camera_pitch is None else controls.camera_pitch
            camera.update(0.0, 0.0, controls.zoom)
        else:
            camera.update(*InputState.dead_zone(controls.look_x, controls.look_y), controls.zoom)
        rows = self.controls if others is None else others
        rows.set_player(PLAYER, controls, camera.yaw)
        self.crowd.step(rows)
        self.last_controls = rows
        root = self.crowd.trajectory.positions[PLAYER, CURRENT]
        camera.follow(float(root[0]), float(self.crowd.trajectory.heights[PLAYER, CURRENT]), float(root[2]))

    # -- the player's character ----------------------------------------------------------------

    def __getattr__(self, name):
        # Per-character arrays of the crowd, read for the player.
        if name in _PLAYER_ARRAYS:
            return getattr(self.crowd, name)[PLAYER]
        if name in _PLAYER_SCALARS:
            return _PLAYER_SCALARS[name](getattr(self.crowd, name)[PLAYER])
        raise AttributeError(name)

    @property
    def frame(self) -> int:
        return self.crowd.frame

    @property
    def expert_weights(self) -> np.ndarray | None:
        """The player's expert weights of the last step (K,), for a kind with experts; else None."""
        weights = self.crowd.expert_weights
        return None if weights is None else weights[PLAYER]

    @property
    def phase_manifold(self) -> np.ndarray | None:
        """The player's phase manifold now (M, 3: phase, amplitude, frequency), for a kind that
        carries one; else None."""
        manifold = self.crowd.phase_manifold
        return None if manifold is None else manifold[PLAYER]

    @property
    def ik(self):
        return self.crowd.ik

    # -- what the renderer reads (frame.DrawnFrame) ---------------------------------------------

    def drawn_transforms(self) -> np.ndarray:
        """(K, 31, 4, 4) every character's pose as drawn (after foot IK), the player first."""
        return self.crowd.global_transforms

    @property
    def crowd_trajectory(self):
        return self.crowd.trajectory if self.crowd.count > 1 else None

    trajectory_samples = None       # the debug view draws the whole trajectory instead

    @property
    def joint_positions_final(self) -> np.ndarray:
        """World joint positions after IK: what is drawn."""
        return self.crowd.global_transforms[PLAYER, :, :3, 3]

    @property
    def root_position(self) -> np.ndarray:
        return self.crowd.trajectory.positions[PLAYER, CURRENT].copy()

    @property
    def root_direction(self) -> np.ndarray:
        return self.crowd.trajectory.directions[PLAYER, CURRENT].copy()

    @property
    def gait(self) -> np.ndarray:
        return self.crowd.trajectory.gaits[PLAYER, CURRENT].copy()

    def state(self) -> dict[str, np.ndarray]:
        """Everything the next step reads, as arrays (copies): `restore` of it makes the following
        steps repeat exactly, so a recording can start mid-play and still be replayed. The
        player's state, or with more characters every character's (a leading character axis)."""
        camera = self.camera
        state = self.crowd.state(PLAYER if self.characters == 1 else slice(None))
        state["camera"] = np.array([camera.yaw, camera.pitch, camera.distance], np.float64)
        state["camera_target"] = np.array(camera.target, np.float32)
        return state

    def restore(self, state: dict[str, np.ndarray]) -> None:
        """Put back a `state()` taken in the same scene with the same network."""
        self.crowd.restore(state, PLAYER if self.characters == 1 else slice(None))
        camera = self.camera
        camera.yaw, camera.pitch, camera.distance = (float(v) for v in state["camera"])
        camera.target = glm.vec3(*(float(v) for v in state["camera_target"]))

    def pose(self) -> Pose:
        """The frame the last step produced (or the start pose), as plain arrays."""
        trajectory = self.trajectory
        return Pose(self.joint_positions_final.copy(), self.global_transforms[:, :3, :3].copy(),
                    self.contacts.copy(), float(self.phase), self.gait, self.root_position, self.root_direction,
                    trajectory.positions[SAMPLE_FRAMES].copy(), trajectory.directions[SAMPLE_FRAMES].copy())


_PLAYER_ARRAYS = ("joint_positions", "joint_velocities", "joint_rotations", "joint_positions_raw", "global_transforms",
                  "contacts", "last_input", "last_output", "target_velocity", "target_direction")
_PLAYER_SCALARS = {"phase": float, "phase_used": float, "strafe_amount": float, "crouched_amount": float,
                   "responsive": bool, "ik_enabled": bool}
