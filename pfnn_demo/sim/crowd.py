"""N characters stepped together: one simulation step, in the original demo's order (docs/original-demo.md,
"One frame, in order"),
vectorised over characters. One character is the case N = 1 (see `Controller`).

Every character has its own input, phase, trajectory, pose and IK locks; they share the scene and
the network, which evaluates all of them in one batch. Headless and deterministic.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..errors import NetworkOutputError
from .controls import GAIT_SMOOTH, Controls, gait_goals, update_targets
from . import bone_lengths
from .features import INPUT_SIZE, STAND, read_output, write_joint_input
from .foot_ik import FootIK, heel_across
from .phase_network import PhaseFunctionedNetwork
from .policy import policy_for
from .rotation import quat_exp, quat_to_matrix, rotate_y, unrotate_y, yaw_matrix, yaw_of
from .scene import Scene
from .skeleton import JOINT_COUNT
from .trajectory import CURRENT, Trajectory

JOINT_SMOOTH = 0.5
IK_FADE_FRAMES = 10    # foot IK switched on or off fades in or out over this many ticks
DIVERGENCE_STDS = 1e4   # outputs farther than this from the mean (in standard deviations) are a failure


def standing_to_moving(stand_weight):
    """The stand amount: 1 while the trajectory moves, 0 once it stands, from the current sample's
    stand gait weight (the original demo's; the trajectory and the phase move on by it)."""
    return (1.0 - stand_weight) ** 0.25


class Crowd:
    def __init__(self, network: PhaseFunctionedNetwork, scene: Scene, count: int = 1,
                 use_heel_contacts: bool | None = None, starts: np.ndarray | None = None,
                 keep_bone_lengths: bool = True, start_pose: str = "settled", original_ik: bool = False):
        """`count` characters in `scene`, at `starts` (count, 2) (x, z) (default: all at the scene's
        start). `use_heel_contacts`: foot IK locks on heel as well as toe contacts; by default as
        the network's weights say (NetworkWeights.heel_contacts). `keep_bone_lengths`: the drawn
        pose is rebuilt on the rest bone lengths (bone_lengths.py); the network's own feedback is
        its raw prediction either way. `start_pose`: characters (re)start in the network's mean
        pose, as the original demo does ("mean"), or in the standing pose the network settles into
        from it ("settled", the default): a mean pose is a blur of every stance, and from it a
        network shuffles for a second, or, pushed at once, can set off walking backwards.
        `original_ik`: the original demo's foot IK (a hard limit to a leg's reach, and a locked foot
        levelled on the network's own axis across it every frame; with `keep_bone_lengths=False`,
        its drawing exactly) instead of easing a leg into full extension and holding a locked
        foot's roll."""
        if start_pose not in ("mean", "settled"):
            raise ValueError(f"start_pose must be 'mean' or 'settled', not {start_pose!r}")
        if count < 1:
            raise ValueError("a crowd needs at least one character")
        self.network = network
        self.policy = policy_for(network)     # what the network's kind carries per character (a phase)
        if network.input_size != INPUT_SIZE + self.policy.extra_inputs:
            raise ValueError(f"the network takes {network.input_size} inputs; the controller builds "
                             f"{INPUT_SIZE + self.policy.extra_inputs}")
        self.policy_state = self.policy.initial_state(count)
        self.count = count
        self.keep_bone_lengths = keep_bone_lengths
        self.trajectory = Trajectory(count)
        if use_heel_contacts is None:
            use_heel_contacts = bool(getattr(network.weights, "heel_contacts", False))
        self.ik = FootIK(count, use_heel_contacts, original_ik)
        self.ik_enabled = np.ones(count, bool)
        # How much of the foot IK is drawn: follows ik_enabled over IK_FADE_FRAMES ticks (a switch
        # at once moved a locked foot to the network's in one frame, up to 130 units).
        self.ik_weight = np.ones(count)
        # Control smoothing state survives scene changes (original-demo.md: Reset).
        self.target_direction = np.tile(np.array([0, 0, 1], np.float32), (count, 1))
        self.target_velocity = np.zeros((count, 3), np.float32)
        self.strafe_amount = np.zeros(count)
        self.crouched_amount = np.zeros(count)
        self.responsive = np.zeros(count, bool)
        self.frame = 0
        self._x = np.zeros((count, INPUT_SIZE), np.float32)
        self._y_mean = network.weights.Ymean
        self._y_limit = DIVERGENCE_STDS * network.weights.Ystd
        self.joint_positions = np.zeros((count, JOINT_COUNT, 3), np.float32)
        self.joint_velocities = np.zeros((count, JOINT_COUNT, 3), np.float32)
        self.joint_rotations = np.zeros((count, JOINT_COUNT, 3, 3), np.float32)
        self.joint_positions_raw = np.zeros((count, JOINT_COUNT, 3), np.float32)
        self.global_transforms = np.tile(np.eye(4, dtype=np.float32), (count, JOINT_COUNT, 1, 1))
        self.contacts = np.zeros((count, 4), np.float32)
        self.last_input = np.zeros((count, INPUT_SIZE), np.float32)
        self.last_output = np.zeros((count, network.output_size), np.float32)
        self.last_used = {}      # what the last evaluation used beside x (the policy says what)
        settled = _settled_pose(network, scene, use_heel_contacts) if start_pose == "settled" else None
        self._start_pose = settled or _mean_pose(network, self.trajectory.gaits.shape[1:])
        self.load_scene(scene, starts)

    # -- state ----------------------------------------------------------------------------------

    def load_scene(self, scene: Scene, starts: np.ndarray | None = None) -> None:
        self.scene = scene
        starts = np.tile(np.asarray(scene.start, np.float64), (self.count, 1)) if starts is None else starts
        self.reset(np.arange(self.count), starts)

    def reset(self, index, starts) -> None:
        """Put characters `index` at `starts` (x, z), standing in the start pose (the network's mean
        pose, original-demo.md: Reset, or the pose it settles into)."""
        index = np.atleast_1d(np.asarray(index))
        starts = np.asarray(starts, np.float32).reshape(-1, 2)
        roots = np.zeros((len(index), 3), np.float32)
        roots[:, 0], roots[:, 2] = starts[:, 0], starts[:, 1]
        roots[:, 1] = self.scene.heightmap.sample(starts[:, 0], starts[:, 1])
        for i, root in zip(index, roots):
            self.trajectory.reset(i, root)
        pose = self._start_pose
        self.joint_positions[index] = roots[:, None] + pose["positions"]
        self.joint_positions_raw[index] = roots[:, None] + pose["positions_raw"]
        self.joint_velocities[index] = pose["velocities"]
        self.joint_rotations[index] = pose["rotations"]
        self.global_transforms[index] = np.eye(4, dtype=np.float32)
        self.global_transforms[index, :, :3, :3] = self.joint_rotations[index]
        self.global_transforms[index, :, :3, 3] = self.joint_positions[index]
        self.contacts[index] = pose["contacts"]
        self.policy.start(self.policy_state, index, pose)
        self.trajectory.gaits[index] = pose["gaits"]
        self.ik.reset(index, roots[:, 1])
        self.ik_weight[index] = self.ik_enabled[index]

    # -- one step ---------------------------------------------------------------------------------

    def step(self, controls: Controls) -> None:
        """Advance every character by one 1/60 s tick."""
        if len(controls) != self.count:
            raise ValueError(f"controls for {len(controls)} characters given to a crowd of {self.count}")
        update_targets(self, controls)
        gaits = self.trajectory.gaits[:, CURRENT]
        gaits += GAIT_SMOOTH * (gait_goals(self.target_velocity, self.crouched_amount, controls.jog) - gaits)
        trajectory, areas, terrain = self.trajectory, self.scene.areas, self.scene.heightmap
        trajectory.predict(self.target_velocity, self.target_direction, self.strafe_amount, self.responsive, areas)
        trajectory.apply_areas_and_heights(areas, terrain)

        x = self._x
        trajectory.write_input(x, terrain)
        previous_root, previous_yaw = trajectory.previous_root, yaw_of(trajectory.directions[:, CURRENT - 1, None])
        write_joint_input(x, unrotate_y(self.joint_positions - previous_root[:, None], previous_yaw),
                          unrotate_y(self.joint_velocities, previous_yaw))

        y, used = self.policy.evaluate(x, self.policy_state)
        failed = ~np.all(np.abs(y - self._y_mean) <= self._y_limit, axis=1)   # also true for NaN
        if np.any(failed):
            who = np.flatnonzero(failed)
            raise NetworkOutputError(
                f"the network produced NaN, infinite or absurd values (beyond {DIVERGENCE_STDS:.0e} standard "
                f"deviations) at frame {self.frame} for character{'s' if len(who) > 1 else ''} "
                f"{', '.join(str(i) for i in who[:8])}{' ...' if len(who) > 8 else ''} "
                f"({self.policy.describe(used, who[0])}); the last valid state is kept", characters=who)
        out = read_output(y)
        self._apply_pose(out, np.asarray(controls.ik, bool))

        stand_amount = standing_to_moving(trajectory.gaits[:, CURRENT, STAND].astype(np.float64))
        trajectory.advance(out["root_velocity"], out["root_turn"], stand_amount, out, areas)
        self.policy.advance(self.policy_state, y, out, stand_amount)
        self.last_input, self.last_output, self.last_used = x.copy(), y, used
        self.frame += 1

    def _apply_pose(self, out: dict, ik_enabled: np.ndarray) -> None:
        """The network's poses in world space, smoothed feedback, then foot IK (original-demo.md: Using the
        output; Foot IK)."""
        root = self.trajectory.root
        yaw = yaw_of(self.trajectory.directions[:, CURRENT])
        positions = rotate_y(out["joint_positions"], yaw[:, None]) + root[:, None]
        velocities = rotate_y(out["joint_velocities"], yaw[:, None])
        rotations = yaw_matrix(yaw, np.float64)[:, None] @ quat_to_matrix(quat_exp(out["joint_rotations"].astype(np.float64)))
        self.joint_positions = self.joint_positions + velocities
        self.joint_positions += JOINT_SMOOTH * (positions - self.joint_positions)
        self.joint_velocities = velocities
        self.joint_rotations = rotations.astype(np.float32)
        self.joint_positions_raw = positions
        self.contacts = out["contacts"].astype(np.float32)

        global_anim = np.tile(np.eye(4, dtype=np.float32), (self.count, JOINT_COUNT, 1, 1))
        global_anim[..., :3, :3] = self.joint_rotations
        # The raw prediction, not the smoothed feedback; on the rest bone lengths unless asked not to.
        global_anim[..., :3, 3] = (bone_lengths.keep_bone_lengths(positions, self.joint_rotations)
                                   if self.keep_bone_lengths else positions)
        self.ik_enabled = ik_enabled.copy()
        if self.frame == 0:     # the first step starts as asked: nothing to fade from
            self.ik_weight = ik_enabled.astype(np.float64)
        else:
            ticks = np.rint(self.ik_weight * IK_FADE_FRAMES) + np.where(ik_enabled, 1, -1)   # whole ticks: exact 0 and 1
            self.ik_weight = np.clip(ticks, 0, IK_FADE_FRAMES) / IK_FADE_FRAMES
        if np.any(self.ik_weight > 0):
            self.global_transforms = self.ik.solve(global_anim, self.contacts, self.scene.heightmap, self.ik_weight)
        else:
            self.global_transforms = global_anim

    # -- views ----------------------------------------------------------------------------------

    @property
    def phase(self) -> np.ndarray | None:
        """(N,) gait phases in radians, for a kind that has them (None otherwise)."""
        return self.policy_state.get("phase")

    @property
    def phase_used(self) -> np.ndarray | None:
        """(N,) the phases the last step evaluated the network at, for a kind that has them."""
        return self.last_used.get("phase_used")

    @property
    def phase_manifold(self) -> np.ndarray | None:
        """(N, M, 3) each character's phase manifold now (per channel: phase in cycles, amplitude,
        frequency in Hz), for a kind that moves through one (None otherwise)."""
        return self.policy.manifold_now(self.policy_state)

    @property
    def expert_weights(self) -> np.ndarray | None:
        """(N, K) the experts' blend of the last step, for a kind that blends experts by a gate."""
        return self.last_used.get("experts_used")

    @property
    def joint_positions_final(self) -> np.ndarray:
        """(N, 31, 3) world joint positions after IK: what is drawn."""
        return self.global_transforms[..., :3, 3]

    @property
    def root_positions(self) -> np.ndarray:
        return self.trajectory.positions[:, CURRENT].copy()

    @property
    def root_directions(self) -> np.ndarray:
        return self.trajectory.directions[:, CURRENT].copy()

    @property
    def gaits(self) -> np.ndarray:
        return self.trajectory.gaits[:, CURRENT].copy()

    # -- snapshots ---------------------------------------------------------------------------------

    def state(self, index=slice(None)) -> dict[str, np.ndarray]:
        """Everything the next step reads, for characters `index` (copies); `restore` of it makes the
        following steps repeat exactly. An integer index gives one character's state without the
        leading axis."""
        trajectory, ik = self.trajectory, self.ik
        return {
            "trajectory_positions": trajectory.positions[index].copy(),
            "trajectory_directions": trajectory.directions[index].copy(),
            "trajectory_heights": trajectory.heights[index].copy(),
            "trajectory_gaits": trajectory.gaits[index].copy(),
            "joint_positions": self.joint_positions[index].copy(),
            "joint_velocities": self.joint_velocities[index].copy(),
            "joint_rotations": self.joint_rotations[index].copy(),
            "joint_positions_raw": np.array(self.joint_positions_raw[index], np.float32),
            "global_transforms": self.global_transforms[index].copy(),
            "contacts": self.contacts[index].copy(),
            **self.policy.snapshot(self.policy_state, index),
            "frame": np.int64(self.frame),
            "target_direction": self.target_direction[index].copy(),
            "target_velocity": self.target_velocity[index].copy(),
            "amounts": np.stack([self.strafe_amount[index], self.crouched_amount[index]], axis=-1),
            "flags": np.stack([self.responsive[index], self.ik_enabled[index]], axis=-1),
            "ik_weight": np.array(self.ik_weight[index], np.float64),
            "ik_lock": ik.lock[index].reshape(np.shape(ik.lock[index])[:-2] + (4,)),
            "ik_position": ik.position[index].reshape(np.shape(ik.position[index])[:-3] + (4, 3)).copy(),
            "ik_height": ik.height[index].reshape(np.shape(ik.height[index])[:-2] + (4,)),
            "ik_across": ik.across[index].copy(),
        }

    def restore(self, state: dict[str, np.ndarray], index=slice(None)) -> None:
        """Put back a `state(index)` taken in the same scene with the same network."""
        trajectory, ik = self.trajectory, self.ik
        trajectory.positions[index] = state["trajectory_positions"]
        trajectory.directions[index] = state["trajectory_directions"]
        trajectory.heights[index] = state["trajectory_heights"]
        trajectory.gaits[index] = state["trajectory_gaits"]
        self.joint_positions[index] = state["joint_positions"]
        self.joint_velocities[index] = state["joint_velocities"]
        self.joint_rotations[index] = state["joint_rotations"]
        self.joint_positions_raw[index] = state["joint_positions_raw"]
        self.global_transforms[index] = state["global_transforms"]
        self.contacts[index] = state["contacts"]
        self.policy.restore(self.policy_state, state, index)
        self.frame = int(state["frame"])
        self.target_direction[index] = state["target_direction"]
        self.target_velocity[index] = state["target_velocity"]
        amounts, flags = np.asarray(state["amounts"]), np.asarray(state["flags"])
        self.strafe_amount[index], self.crouched_amount[index] = amounts[..., 0], amounts[..., 1]
        self.responsive[index], self.ik_enabled[index] = flags[..., 0], flags[..., 1]
        # Recordings made before the IK faded have no weight: the IK was all on or all off.
        self.ik_weight[index] = state.get("ik_weight", flags[..., 1])
        ik.lock[index] = np.asarray(state["ik_lock"]).reshape(np.shape(ik.lock[index]))
        ik.position[index] = np.asarray(state["ik_position"]).reshape(np.shape(ik.position[index]))
        ik.height[index] = np.asarray(state["ik_height"]).reshape(np.shape(ik.height[index]))
        # States saved before locked feet held their roll have none: a locked foot then holds the
        # axis its drawn heel had.
        ik.across[index] = state["ik_across"] if "ik_across" in state else \
            heel_across(np.asarray(state["global_transforms"]))


def _mean_pose(network: PhaseFunctionedNetwork, gaits_shape: tuple) -> dict:
    """The network's mean output pose, relative to the root and facing +Z: the original demo's
    start (original-demo.md: Reset), with no contacts, phase 0 and no gait yet."""
    mean = read_output(network.weights.Ymean)
    positions = mean["joint_positions"].astype(np.float32)
    return {"positions": positions, "positions_raw": positions,
            "velocities": mean["joint_velocities"].astype(np.float32),
            "rotations": quat_to_matrix(quat_exp(mean["joint_rotations"].astype(np.float64))).astype(np.float32),
            "contacts": np.zeros(4, np.float32), "phase": 0.0, "gaits": np.zeros(gaits_shape, np.float32)}


SETTLE_FRAMES = 90      # 1.5 s: a network stands still well within this from its mean pose
_settled_poses: "weakref.WeakKeyDictionary[PhaseFunctionedNetwork, dict]" = weakref.WeakKeyDictionary()


def _settled_pose(network: PhaseFunctionedNetwork, scene: Scene, use_heel_contacts) -> dict | None:
    """The pose a character settles into after standing SETTLE_FRAMES ticks from the network's
    mean pose at the scene's start, relative to its root and facing +Z (found once per network,
    weight mode, contact rule and scene); None if the network fails while standing."""
    cache = _settled_poses.setdefault(network, {})
    # Per scene too: a scene may start its characters in a crouch area.
    key = (network.mode, use_heel_contacts, scene.name)
    if key not in cache:
        probe = Crowd(network, scene, 1, use_heel_contacts, start_pose="mean")
        still = Controls.still(1)
        try:
            for _ in range(SETTLE_FRAMES):
                probe.step(still)
        except NetworkOutputError:
            # A network that fails standing still fails in play too, where the error is reported
            # with its frame; until then it starts from its mean pose.
            cache[key] = None
            return None
        root, yaw = probe.trajectory.root[0], float(yaw_of(probe.trajectory.directions[:, CURRENT])[0])
        unturn = yaw_matrix(-yaw)
        cache[key] = {
            "positions": unrotate_y(probe.joint_positions[0] - root, yaw).astype(np.float32),
            "positions_raw": unrotate_y(probe.joint_positions_raw[0] - root, yaw).astype(np.float32),
            "velocities": unrotate_y(probe.joint_velocities[0], yaw).astype(np.float32),
            "rotations": (unturn @ probe.joint_rotations[0]).astype(np.float32),
            "contacts": probe.contacts[0].copy(), "gaits": probe.trajectory.gaits[0].copy(),
            **probe.policy.snapshot(probe.policy_state, 0)}     # its phase (and a manifold)
    return cache[key]
