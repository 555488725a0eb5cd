"""One simulation step of the character, in the original demo's order (spec 6.3-6.8).

Headless and deterministic: the same scene, network and input sequence give the same frames.
Imports neither pygame nor moderngl.
"""

from __future__ import annotations

import dataclasses
import math

from pyglm import glm
import numpy as np

from .camera import OrbitCamera
from ..errors import NetworkOutputError
from .features import INPUT, INPUT_SIZE, read_output
from .foot_ik import FootIK
from .input_state import InputState
from .phase_network import PhaseFunctionedNetwork
from .rotation import quat_exp, quat_to_matrix, rotate_y, unrotate_y, yaw_matrix
from .scene import Scene
from .skeleton import JOINT_COUNT
from .trajectory import CROUCH, CURRENT, JOG, SAMPLE_FRAMES, STAND, WALK, Trajectory

# Weight of the new value in each per-frame blend (spec 1.3).
DIRECTION_SMOOTH = 0.9
VELOCITY_SMOOTH = 0.9
STRAFE_SMOOTH = 0.9
CROUCHED_SMOOTH = 0.9
GAIT_SMOOTH = 0.1
JOINT_SMOOTH = 0.5
TWO_PI = 2 * math.pi
DIVERGENCE_STDS = 1e4   # outputs farther than this from the mean (in standard deviations) are a failure
UP = glm.vec3(0, 1, 0)


def _mix_directions(a: glm.vec3, b: glm.vec3, t: float) -> glm.vec3:
    """Shortest-arc blend of two horizontal directions through yaw quaternions (spec 6.1)."""
    qa = glm.angleAxis(math.atan2(a.x, a.z), UP)
    qb = glm.angleAxis(math.atan2(b.x, b.z), UP)
    return glm.slerp(qa, qb, t) * glm.vec3(0, 0, 1)


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


class Controller:
    def __init__(self, network: PhaseFunctionedNetwork, scene: Scene, use_heel_contacts: bool | None = None):
        """`use_heel_contacts`: foot IK locks on heel as well as toe contacts; by default as the
        network's weights say (NetworkWeights.heel_contacts)."""
        if network.input_size != INPUT_SIZE:
            raise ValueError(f"the network takes {network.input_size} inputs; the controller builds {INPUT_SIZE}")
        self.network = network
        self.camera = OrbitCamera()
        self.trajectory = Trajectory()
        if use_heel_contacts is None:
            use_heel_contacts = bool(getattr(network.weights, "heel_contacts", False))
        self.ik = FootIK(use_heel_contacts)
        self.ik_enabled = True
        # Control smoothing state survives scene changes (spec 6.2).
        self.target_direction = glm.vec3(0, 0, 1)
        self.target_velocity = glm.vec3(0)
        self.strafe_amount = 0.0
        self.crouched_amount = 0.0
        self.responsive = False
        self.frame = 0
        self._x = np.zeros(INPUT_SIZE, np.float32)
        self._y_mean = network.weights.Ymean
        self._y_limit = DIVERGENCE_STDS * network.weights.Ystd
        self.load_scene(scene)

    # -- state ----------------------------------------------------------------------------------

    def load_scene(self, scene: Scene) -> None:
        self.scene = scene
        self.reset(scene.start)

    def reset(self, start: tuple[float, float]) -> None:
        """Put the character at `start` in the network's mean pose (spec 6.2)."""
        x, z = start
        root = np.array([x, self.scene.heightmap.sample(x, z), z], np.float32)
        self.trajectory.reset(root)
        mean = read_output(self.network.weights.Ymean)
        self.joint_positions = (root + mean["joint_positions"]).astype(np.float32)
        self.joint_velocities = mean["joint_velocities"].astype(np.float32).copy()
        self.joint_rotations = quat_to_matrix(quat_exp(mean["joint_rotations"].astype(np.float64))).astype(np.float32)
        self.joint_positions_raw = self.joint_positions.copy()
        self.global_transforms = np.tile(np.eye(4, dtype=np.float32), (JOINT_COUNT, 1, 1))
        self.global_transforms[:, :3, :3] = self.joint_rotations
        self.global_transforms[:, :3, 3] = self.joint_positions
        self.contacts = np.zeros(4, np.float32)
        self.phase = 0.0
        self.ik.reset(float(root[1]))

    # -- one step ---------------------------------------------------------------------------------

    def step(self, controls: InputState) -> None:
        """Advance the simulation by one 1/60 s tick."""
        self._update_targets(controls)
        self._update_gait(controls)
        trajectory, areas, terrain = self.trajectory, self.scene.areas, self.scene.heightmap
        trajectory.predict(np.array(self.target_velocity, np.float32), np.array(self.target_direction, np.float32),
                           self.strafe_amount, self.responsive, areas)
        trajectory.apply_areas_and_heights(areas, terrain)

        x = self._x
        trajectory.write_input(x, terrain)
        previous_root, previous_yaw = trajectory.previous_root, float(trajectory.yaws[CURRENT - 1])
        x[INPUT["joint_positions"]] = unrotate_y(self.joint_positions - previous_root, previous_yaw).ravel()
        x[INPUT["joint_velocities"]] = unrotate_y(self.joint_velocities, previous_yaw).ravel()

        phase_used = self.phase
        y = self.network.predict(x, phase_used)
        if not np.all(np.abs(y - self._y_mean) <= self._y_limit):   # also false for NaN
            raise NetworkOutputError(
                f"the network produced NaN, infinite or absurd values (beyond {DIVERGENCE_STDS:.0e} standard "
                f"deviations) at frame {self.frame} (phase {phase_used:.3f}); the last valid state is kept")
        out = read_output(y)
        self._apply_pose(out, controls.ik)

        stand_amount = (1.0 - float(trajectory.gaits[CURRENT, STAND])) ** 0.25
        trajectory.advance(out["root_velocity"], out["root_turn"], stand_amount, out, areas)
        self.phase = (self.phase + (0.9 * stand_amount + 0.1) * TWO_PI * out["phase_step"]) % TWO_PI
        root = trajectory.positions[CURRENT]
        self.camera.follow(float(root[0]), float(trajectory.heights[CURRENT]), float(root[2]))
        self.last_input, self.last_output, self.phase_used = x.copy(), y, phase_used
        self.frame += 1

    def _update_targets(self, controls: InputState) -> None:
        """Camera, target velocity and direction, strafe and crouch amounts (spec 6.3)."""
        camera = self.camera
        if controls.camera_yaw is not None or controls.camera_pitch is not None:
            camera.yaw = camera.yaw if controls.camera_yaw is None else controls.camera_yaw
            camera.pitch = camera.pitch if controls.camera_pitch is None else controls.camera_pitch
            camera.update(0.0, 0.0, controls.zoom)
        else:
            camera.update(*InputState.dead_zone(controls.look_x, controls.look_y), controls.zoom)
        move_x, move_y = InputState.dead_zone(controls.move_x, controls.move_y)

        forward = camera.forward_xz
        camera_rotation = glm.mat3(glm.rotate(glm.mat4(1.0), math.atan2(forward.x, forward.z), UP))
        speed = 2.5 + 5.0 * controls.jog
        wanted = speed * (camera_rotation * glm.vec3(-move_x, 0.0, move_y))
        self.target_velocity = glm.mix(self.target_velocity, wanted, VELOCITY_SMOOTH)

        self.strafe_amount += STRAFE_SMOOTH * (controls.strafe - self.strafe_amount)
        velocity_direction = (self.target_direction if glm.length(self.target_velocity) < 1e-5
                              else glm.normalize(self.target_velocity))
        wanted_direction = _mix_directions(velocity_direction, forward, self.strafe_amount)
        self.target_direction = _mix_directions(self.target_direction, wanted_direction, DIRECTION_SMOOTH)

        self.crouched_amount += CROUCHED_SMOOTH * (float(controls.crouch) - self.crouched_amount)
        self.responsive = controls.responsive

    def _update_gait(self, controls: InputState) -> None:
        """Blend the current frame's gait toward stand, crouch, jog or walk (spec 6.4)."""
        speed = glm.length(self.target_velocity)
        goal = np.zeros(6, np.float32)
        if speed < 0.1:
            goal[STAND] = 1.0 - min(max(speed / 0.1, 0.0), 1.0)
        elif self.crouched_amount > 0.1:
            goal[CROUCH] = self.crouched_amount
        elif controls.jog != 0.0:
            goal[JOG] = 1.0
        else:
            goal[WALK] = 1.0
        gaits = self.trajectory.gaits[CURRENT]
        gaits += GAIT_SMOOTH * (goal - gaits)

    def _apply_pose(self, out: dict, ik_enabled: bool) -> None:
        """The network's pose in world space, smoothed feedback, then foot IK (spec 6.7, 7)."""
        root = self.trajectory.root
        yaw = float(self.trajectory.yaws[CURRENT])
        positions = rotate_y(out["joint_positions"], yaw) + root
        velocities = rotate_y(out["joint_velocities"], yaw)
        rotations = yaw_matrix(yaw) @ quat_to_matrix(quat_exp(out["joint_rotations"].astype(np.float64)))
        self.joint_positions = self.joint_positions + velocities
        self.joint_positions += JOINT_SMOOTH * (positions - self.joint_positions)
        self.joint_velocities = velocities
        self.joint_rotations = rotations.astype(np.float32)
        self.joint_positions_raw = positions
        self.contacts = out["contacts"].astype(np.float32)

        global_anim = np.tile(np.eye(4, dtype=np.float32), (JOINT_COUNT, 1, 1))
        global_anim[:, :3, :3] = self.joint_rotations
        global_anim[:, :3, 3] = positions   # the raw prediction, not the smoothed feedback
        self.ik_enabled = ik_enabled
        if ik_enabled:
            self.global_transforms = self.ik.solve(global_anim, self.contacts, self.scene.heightmap)
        else:
            self.global_transforms = global_anim

    # -- snapshots ---------------------------------------------------------------------------------

    def state(self) -> dict[str, np.ndarray]:
        """Everything the next step reads, as arrays (copies): `restore` of it makes the following
        steps repeat exactly, so a recording can start mid-play and still be replayed."""
        trajectory, ik, camera = self.trajectory, self.ik, self.camera
        return {
            "trajectory_positions": trajectory.positions.copy(),
            "trajectory_directions": trajectory.directions.copy(),
            "trajectory_heights": trajectory.heights.copy(),
            "trajectory_gaits": trajectory.gaits.copy(),
            "joint_positions": np.array(self.joint_positions, np.float32),
            "joint_velocities": np.array(self.joint_velocities, np.float32),
            "joint_rotations": self.joint_rotations.copy(),
            "joint_positions_raw": np.array(self.joint_positions_raw, np.float32),
            "global_transforms": self.global_transforms.copy(),
            "contacts": self.contacts.copy(),
            "phase": np.float64(self.phase),
            "frame": np.int64(self.frame),
            "target_direction": np.array(self.target_direction, np.float32),
            "target_velocity": np.array(self.target_velocity, np.float32),
            "amounts": np.array([self.strafe_amount, self.crouched_amount], np.float64),
            "flags": np.array([self.responsive, self.ik_enabled]),
            "ik_lock": np.array(ik.lock, np.float64),
            "ik_position": np.array([np.array(p) for p in ik.position], np.float32),
            "ik_height": np.array(ik.height, np.float64),
            "camera": np.array([camera.yaw, camera.pitch, camera.distance], np.float64),
            "camera_target": np.array(camera.target, np.float32),
        }

    def restore(self, state: dict[str, np.ndarray]) -> None:
        """Put back a `state()` taken in the same scene with the same network."""
        trajectory, ik, camera = self.trajectory, self.ik, self.camera
        trajectory.positions[:] = state["trajectory_positions"]
        trajectory.directions[:] = state["trajectory_directions"]
        trajectory.heights[:] = state["trajectory_heights"]
        trajectory.gaits[:] = state["trajectory_gaits"]
        self.joint_positions = np.array(state["joint_positions"], np.float32)
        self.joint_velocities = np.array(state["joint_velocities"], np.float32)
        self.joint_rotations = np.array(state["joint_rotations"], np.float32)
        self.joint_positions_raw = np.array(state["joint_positions_raw"], np.float32)
        self.global_transforms = np.array(state["global_transforms"], np.float32)
        self.contacts = np.array(state["contacts"], np.float32)
        self.phase = float(state["phase"])
        self.frame = int(state["frame"])
        self.target_direction = glm.vec3(*(float(v) for v in state["target_direction"]))
        self.target_velocity = glm.vec3(*(float(v) for v in state["target_velocity"]))
        self.strafe_amount, self.crouched_amount = (float(v) for v in state["amounts"])
        self.responsive, self.ik_enabled = (bool(v) for v in state["flags"])
        ik.lock = [float(v) for v in state["ik_lock"]]
        ik.position = [glm.vec3(*(float(v) for v in p)) for p in state["ik_position"]]
        ik.height = [float(v) for v in state["ik_height"]]
        camera.yaw, camera.pitch, camera.distance = (float(v) for v in state["camera"])
        camera.target = glm.vec3(*(float(v) for v in state["camera_target"]))

    # -- views for recording and drawing -------------------------------------------------------

    def pose(self) -> Pose:
        """The frame the last step produced (or the start pose), as plain arrays."""
        trajectory = self.trajectory
        return Pose(self.joint_positions_final.copy(), self.global_transforms[:, :3, :3].copy(),
                    self.contacts.copy(), float(self.phase), self.gait, self.root_position, self.root_direction,
                    trajectory.positions[SAMPLE_FRAMES].copy(), trajectory.directions[SAMPLE_FRAMES].copy())

    @property
    def joint_positions_final(self) -> np.ndarray:
        """World joint positions after IK: what is drawn."""
        return self.global_transforms[:, :3, 3]

    @property
    def root_position(self) -> np.ndarray:
        return self.trajectory.positions[CURRENT].copy()

    @property
    def root_direction(self) -> np.ndarray:
        return self.trajectory.directions[CURRENT].copy()

    @property
    def gait(self) -> np.ndarray:
        return self.trajectory.gaits[CURRENT].copy()
