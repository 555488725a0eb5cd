"""Training windows in exactly the layout the runtime consumes (original-demo.md: The training recipe,
features.py).

A clip becomes world joint positions and rotations on the project's canonical skeleton at
60 fps; each frame i with 60 frames of context on both sides becomes one row of X (342 inputs),
Y (311 outputs) and P (phase in cycles). Heights are relative to the ground, which is flat at 0
here (synthetic terrain is added by the synthesis step).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import ndimage

from ...sim.features import (INPUT, INPUT_SIZE, OUTPUT, OUTPUT_SIZE, SAMPLES, SAMPLE_STEP, side_offsets,
                             write_joint_input, write_trajectory_input)
from ...sim.rotation import (matrix_to_euler_zyx, matrix_to_quat, quat_slerp, quat_to_matrix, rotate_y,
                             rotation_between, yaw_matrix)
from ...motion.bvh import Motion
from ...sim.skeleton import BVH_TO_DEMO_UNITS, CONTACT_JOINTS, JOINT_NAMES, _REST_OFFSETS_BVH
from . import labels

FPS = 60
WINDOW = 60
FACING_SIGMA = 20          # frames of Gaussian smoothing of the facing direction (the original's)
MIRROR = np.array([JOINT_NAMES.index(n.replace("Left", "@").replace("Right", "Left").replace("@", "Right")
                             .replace("LHip", "@").replace("RHip", "LHip").replace("@", "RHip")
                             .replace("LThumb", "@").replace("RThumb", "LThumb").replace("@", "RThumb"))
                   for n in JOINT_NAMES])


@dataclasses.dataclass
class Clip:
    """A labelled clip on the canonical skeleton at 60 fps."""

    name: str
    positions: np.ndarray      # (T, 31, 3) world, demo units
    rotations: np.ndarray      # (T, 31, 3, 3) world
    phase: np.ndarray          # (T,) cycles
    gaits: np.ndarray          # (T, 6)
    contacts: np.ndarray       # (T, 4) float: L heel, L toe, R heel, R toe
    source: str = "cmu"        # where the motion came from: "cmu" (BVH, ASF/AMC) or "deepmimic"
    ground: object = None      # ground(x, z) under a clip that is not on flat ground (stairs)
    category: str = ""         # what the clip shows, from its folder's clips.json ("walk", "jump" ...)
    one_shot: bool = False     # a motion that happens once (a start, a stop, a jump), not a gait cycle
    validation: bool = False   # held out of training to measure it (clips.json "validation")

    @property
    def frames(self) -> int:
        return len(self.positions)

    def ground_at(self, x, z) -> np.ndarray:
        """The clip's ground height under points (x, z): its own ground, or flat at 0."""
        if self.ground is None:
            return np.zeros_like(np.asarray(x, np.float64))
        return np.asarray(self.ground(x, z), np.float64)


def retarget_to_canonical(motion: Motion, align_rest: bool = False) -> Motion:
    """A clip in the 31-joint CMU hierarchy onto the canonical skeleton: the same joint rotations
    on the canonical bone offsets; the root's path scaled by the ratio of leg lengths.

    With `align_rest`, each joint's rotation is first turned so that the canonical bone points
    where the subject's bone pointed (`rest_aligned`): subjects' rest poses differ from the
    canonical one by up to 25 degrees per bone (a hip joint's offset, a foot's pitch), and the same
    rotations on other rest directions give another pose."""
    if list(motion.names) != list(JOINT_NAMES):
        raise ValueError("retarget_to_canonical needs the 31-joint CMU hierarchy")
    if align_rest:
        motion = rest_aligned(motion)
    leg = [2, 3, 4]
    scale = np.linalg.norm(_REST_OFFSETS_BVH[leg], axis=1).sum() / np.linalg.norm(motion.offsets[leg], axis=1).sum()
    values = motion.values.copy()
    position_columns = [k for k, c in enumerate(motion.channels[0]) if c.endswith("position")]
    values[:, position_columns] *= scale
    return Motion(list(motion.names), motion.parents, _REST_OFFSETS_BVH.copy(), motion.channels, values,
                  motion.frame_time, motion.end_sites)


def rest_aligned(motion: Motion) -> Motion:
    """The same motion re-expressed on bones that point the canonical way at rest (lengths kept):
    every world rotation W(j) becomes W(j) A(j), where A(j) turns the canonical offset of j's
    child onto the subject's (the identity where either has no length, e.g. the hips' three
    zero-length children), so that every bone points in the world where it did."""
    parents = np.asarray(motion.parents)
    align = np.broadcast_to(np.eye(3), (len(parents), 3, 3)).copy()
    for joint in range(len(parents)):
        children = [c for c in np.flatnonzero(parents == joint)
                    if np.linalg.norm(motion.offsets[c]) > 1e-6 and np.linalg.norm(_REST_OFFSETS_BVH[c]) > 1e-6]
        if len(children) == 1:
            align[joint] = rotation_between(_REST_OFFSETS_BVH[children[0]], motion.offsets[children[0]])
    world = motion.global_transforms()
    rotations = world[..., :3, :3] @ align
    local = rotations.copy()
    local[:, 1:] = np.swapaxes(rotations[:, parents[1:]], -1, -2) @ rotations[:, 1:]
    values = motion.values.copy()
    for joint, (start, channels) in enumerate(motion._joint_columns()):
        order = [c[0] for c in channels if c.endswith("rotation")]
        if order != ["Z", "Y", "X"]:
            raise ValueError(f"rest alignment needs Z Y X rotation channels, joint {motion.names[joint]} has "
                             + " ".join(order))
        columns = [start + k for k, c in enumerate(channels) if c.endswith("rotation")]
        values[:, columns] = np.degrees(matrix_to_euler_zyx(local[:, joint]))
    # Each offset seen from its parent's aligned frame: the aligned child along the canonical way.
    offsets = motion.offsets.copy()
    offsets[1:] = np.einsum("jki,jk->ji", align[parents[1:]], motion.offsets[1:])
    return Motion(list(motion.names), parents, offsets, motion.channels, values, motion.frame_time,
                  motion.end_sites)


def clip_from_motion(motion, name: str, ground: float | None = None, align_rest: bool = False) -> Clip:
    """Canonical skeleton, resampled to 60 fps, stood on y = 0, labelled automatically."""
    world = retarget_to_canonical(motion, align_rest).global_transforms(BVH_TO_DEMO_UNITS)
    source_fps = 1.0 / motion.frame_time
    step = source_fps / FPS
    frames = np.arange(0, world.shape[0] - 1e-9, step)
    world = _resample(world, frames)
    if step < 1.0:
        world = _smooth_upsampled(world, 0.5 / step)
    positions = world[..., :3, 3]
    ground = float(np.percentile(positions[:, CONTACT_JOINTS, 1], 2)) - 3.0 if ground is None else ground
    positions = positions - np.array([0.0, ground, 0.0])
    rotations = world[..., :3, :3]
    contacts = labels.foot_contacts(positions, FPS)
    strikes = labels.foot_strikes(contacts, FPS)
    phase = labels.phase_from_strikes(strikes, len(positions), FPS)
    gaits = labels.gait_weights(positions, contacts, FPS)
    return Clip(name, positions.astype(np.float32), rotations.astype(np.float32), phase, gaits.astype(np.float32),
                contacts.astype(np.float32))


def _resample(world: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """Transforms at fractional frames: positions interpolated linearly, rotations slerped (a
    30 fps source doubled by repeating rotations would teach the network to shake)."""
    low = np.floor(frames).astype(int)
    high = np.minimum(low + 1, world.shape[0] - 1)
    mu = (frames - low)[:, None, None]
    out = world[low].copy()
    out[..., :3, 3] = (1 - mu) * world[low][..., :3, 3] + mu * world[high][..., :3, 3]
    if np.any(mu > 0):
        weights = np.broadcast_to(mu[:, :, 0], (len(frames), world.shape[1]))
        out[..., :3, :3] = quat_to_matrix(quat_slerp(matrix_to_quat(world[low][..., :3, :3]),
                                                     matrix_to_quat(world[high][..., :3, :3]), weights))
    return out


def _smooth_upsampled(world: np.ndarray, sigma: float) -> np.ndarray:
    """A source slower than 60 fps, interpolated, moves in straight segments between its frames and
    turns sharply at each: every joint's acceleration comes in spikes at the source's frame rate
    (the 30 fps DeepMimic run shook 3377 units/s^2 above 7.5 Hz against 1200 for 60 and 120 fps
    captured runs). A Gaussian of half a source frame rounds the corners (845; the walk's 655 to
    183) and leaves the steps (a 3 Hz movement keeps 95 %); rotations are smoothed as
    sign-aligned quaternions."""
    out = world.copy()
    out[..., :3, 3] = ndimage.gaussian_filter1d(world[..., :3, 3], sigma, axis=0, mode="nearest")
    quats = matrix_to_quat(world[..., :3, :3])
    flips = np.sign(np.sum(quats[1:] * quats[:-1], axis=-1, keepdims=True))
    quats[1:] *= np.cumprod(np.where(flips == 0, 1.0, flips), axis=0)
    quats = ndimage.gaussian_filter1d(quats, sigma, axis=0, mode="nearest")
    out[..., :3, :3] = quat_to_matrix(quats / np.linalg.norm(quats, axis=-1, keepdims=True))
    return out


def mirror_clip(clip: Clip) -> Clip:
    """Left and right swapped: x negated, joints swapped, phase shifted half a cycle."""
    flip = np.diag([-1.0, 1.0, 1.0]).astype(np.float32)
    positions = clip.positions[:, MIRROR] * np.array([-1.0, 1.0, 1.0], np.float32)
    rotations = flip @ clip.rotations[:, MIRROR] @ flip
    contacts = clip.contacts[:, [2, 3, 0, 1]]
    ground = None if clip.ground is None else _mirrored(clip.ground)
    return Clip(clip.name + "_mirror", positions, rotations, np.mod(clip.phase + 0.5, 1.0), clip.gaits.copy(),
                contacts, clip.source, ground)


def _mirrored(ground):
    return lambda x, z: ground(-np.asarray(x), z)


def facing_yaw(positions: np.ndarray) -> np.ndarray:
    """Yaw of the body's facing direction per frame (across shoulders and hips, smoothed)."""
    across = (positions[:, 18] - positions[:, 25]) + (positions[:, 2] - positions[:, 7])
    across[:, 1] = 0
    across /= np.linalg.norm(across, axis=1, keepdims=True)
    forward = np.cross(across, [0.0, 1.0, 0.0])
    forward = ndimage.gaussian_filter1d(forward, FACING_SIGMA, axis=0, mode="nearest")
    return np.arctan2(forward[:, 0], forward[:, 2])


def _quat_log(rotations: np.ndarray) -> np.ndarray:
    q = matrix_to_quat(rotations)
    q = np.where(q[..., :1] < 0, -q, q)                  # the w >= 0 hemisphere
    v = q[..., 1:]
    sin_half = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = np.arctan2(sin_half, q[..., :1])
    return np.where(sin_half > 1e-9, v / np.where(sin_half > 1e-9, sin_half, 1) * angle, 0.0)


STANDING_SPEED = 20.0      # units/s: a clip end slower than this is extended standing still


def extended_root(root: np.ndarray, yaw: np.ndarray, gaits: np.ndarray, frames: int = WINDOW):
    """The root path, facing and gait labels carried `frames` frames past both ends of a clip:
    at the end's own velocity (averaged over its last 10 frames), or standing where the end is
    slower than STANDING_SPEED, with the facing and the gait held. This is what the trajectory
    input assumes around a one-shot clip: the motion goes on as it was (no poses are invented,
    only the path on which they would continue)."""
    def velocity(points):
        v = (points[-1] - points[0]) / max(len(points) - 1, 1)
        v[1] = 0.0
        return v if np.linalg.norm(v[[0, 2]]) * FPS >= STANDING_SPEED else np.zeros(3)
    steps = np.arange(1, frames + 1)[:, None]
    before = root[0] - velocity(root[:10]) * steps[::-1]
    after = root[-1] + velocity(root[-10:]) * steps
    pad = lambda a: np.concatenate([np.repeat(a[:1], frames, 0), a, np.repeat(a[-1:], frames, 0)])   # noqa: E731
    return np.concatenate([before, root, after]), pad(yaw), pad(gaits)


def clip_windows(clip: Clip, terrain_height=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X (N, 342), Y (N, 311), P (N,) for every frame of the clip but its first and last; the
    trajectory window of 60 frames on each side runs on past the clip's ends (extended_root).

    `terrain_height(x, z)` gives the ground under points (default: the clip's own ground, or
    flat at 0).
    """
    positions, rotations = clip.positions.astype(np.float64), clip.rotations.astype(np.float64)
    yaw = np.unwrap(facing_yaw(positions))
    ground = terrain_height or clip.ground_at
    root, yaw_all, gaits_all = extended_root(positions[:, 0].copy(), yaw, clip.gaits)
    root[:, 1] = ground(root[:, 0], root[:, 2])
    if clip.frames < 3:
        return np.zeros((0, INPUT_SIZE), np.float32), np.zeros((0, OUTPUT_SIZE), np.float32), np.zeros(0, np.float32)
    frames = np.arange(1, clip.frames - 1)          # in the clip
    at = frames + WINDOW                             # the same frames in the extended path
    n = len(frames)
    samples = at[:, None] + SAMPLE_OFFSETS[None, :]                       # (N, 12): -60 ... 50
    X = np.zeros((n, INPUT_SIZE))
    Y = np.zeros((n, OUTPUT_SIZE))
    forward = np.stack([np.sin(yaw_all), np.zeros_like(yaw_all), np.cos(yaw_all)], axis=1)
    phase = clip.phase
    dphase = np.mod(np.roll(phase, -1) - phase, 1.0)
    now, before, after = yaw_all[at][:, None], yaw_all[at - 1][:, None], yaw_all[at + 1][:, None]
    # The runtime's root height is the mean terrain height under the 12 trajectory samples.
    height = root[samples, 1].mean(axis=1)
    origin = np.stack([root[at, 0], height, root[at, 2]], axis=1)
    side = side_offsets(yaw_all[samples])
    positive, negative = root[samples] + side, root[samples] - side
    heights = (ground(positive[..., 0], positive[..., 2]) - height[:, None], root[samples, 1] - height[:, None],
               ground(negative[..., 0], negative[..., 2]) - height[:, None])
    write_trajectory_input(X, rotate_y(root[samples] - origin[:, None], -now), rotate_y(forward[samples], -now),
                           gaits_all[samples], heights)
    previous = np.stack([root[at - 1, 0], height, root[at - 1, 2]], axis=1)
    write_joint_input(X, rotate_y(positions[frames - 1] - previous[:, None], -before),
                      rotate_y(positions[frames] - positions[frames - 1], -before))

    step = rotate_y(root[at + 1] - root[at], -now[:, 0])
    Y[:, OUTPUT["root_velocity"]] = step[:, [0, 2]]
    Y[:, OUTPUT["root_turn"]] = (now - after)
    Y[:, OUTPUT["phase_step"]] = dphase[frames, None]
    Y[:, OUTPUT["contacts"]] = clip.contacts[frames]
    future = at[:, None] + 1 + np.arange(0, 60, SAMPLE_STEP)[None, :]
    next_origin = root[at + 1] * np.array([1.0, 0.0, 1.0])
    future_local = rotate_y(root[future] - next_origin[:, None], -after)
    Y[:, OUTPUT["future_x"]] = future_local[..., 0]
    Y[:, OUTPUT["future_z"]] = future_local[..., 2]
    future_direction = rotate_y(forward[future], -after)
    Y[:, OUTPUT["future_direction_x"]] = future_direction[..., 0]
    Y[:, OUTPUT["future_direction_z"]] = future_direction[..., 2]
    Y[:, OUTPUT["joint_positions"]] = rotate_y(positions[frames] - origin[:, None], -now).reshape(n, -1)
    Y[:, OUTPUT["joint_velocities"]] = rotate_y(positions[frames + 1] - positions[frames], -now).reshape(n, -1)
    unturn = np.stack([yaw_matrix(-a, np.float64) for a in yaw_all[at]])
    Y[:, OUTPUT["joint_rotations"]] = _quat_log(unturn[:, None] @ rotations[frames]).reshape(n, -1)
    return X.astype(np.float32), Y.astype(np.float32), phase[frames].astype(np.float32)


# The root's velocity and turn are 3 of the 311 outputs, yet they are what carries the character
# where the player steers: their errors count this many times (squared) as much as their share.
ROOT_MOTION_WEIGHT = 3.0
# The predicted future trajectory is fed back as the next frame's near future (the stick only
# bends its far end, original-demo.md: Predicting the future trajectory): an error there that straightens a turn
# delays every change of way.
FUTURE_TRAJECTORY_WEIGHT = 2.0
OUTPUT_WEIGHTS = {"root_velocity": ROOT_MOTION_WEIGHT, "root_turn": ROOT_MOTION_WEIGHT,
                  "future_x": FUTURE_TRAJECTORY_WEIGHT, "future_z": FUTURE_TRAJECTORY_WEIGHT,
                  "future_direction_x": FUTURE_TRAJECTORY_WEIGHT, "future_direction_z": FUTURE_TRAJECTORY_WEIGHT}

# Joints masked out of the input (helpers with zero offset, fingers and thumbs, original-demo.md: The training
# recipe).
MASKED_JOINTS = (1, 6, 11, 14, 17, 21, 22, 23, 24, 28, 29, 30)


def normalisation(X: np.ndarray, Y: np.ndarray, extra_output_groups=()) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                                  np.ndarray]:
    """Means and group-shared standard deviations, with the joint weighting of original-demo.md: The
    training recipe. Inputs after the 342 (a kind's own, such as the DeepPhase manifold) share one
    deviation; outputs after the 311 share one per slice of `extra_output_groups`."""
    x_mean, y_mean = X.mean(axis=0), Y.mean(axis=0)
    x_std, y_std = X.std(axis=0), Y.std(axis=0)
    joint_weight = np.ones(31)
    joint_weight[list(MASKED_JOINTS)] = 1e-10
    joint_weight = np.repeat(joint_weight, 3)
    shared_x = np.empty_like(x_std)
    groups_x = [INPUT["trajectory_x"], INPUT["trajectory_z"], INPUT["direction_x"], INPUT["direction_z"],
                INPUT["gaits"], slice(INPUT["height_side_pos"].start, INPUT["height_side_neg"].stop)]
    for group in groups_x:
        shared_x[group] = x_std[group].mean()
    for key in ("joint_positions", "joint_velocities"):
        group = INPUT[key]
        shared_x[group] = x_std[group].mean() / (0.1 * joint_weight)
    shared_y = np.empty_like(y_std)
    groups_y = [OUTPUT["root_velocity"], OUTPUT["root_turn"], OUTPUT["phase_step"], OUTPUT["contacts"],
                slice(OUTPUT["future_x"].start, OUTPUT["future_z"].stop),
                slice(OUTPUT["future_direction_x"].start, OUTPUT["future_direction_z"].stop),
                OUTPUT["joint_positions"], OUTPUT["joint_velocities"], OUTPUT["joint_rotations"]]
    for group in groups_y:
        shared_y[group] = y_std[group].mean()
    for key, weight in OUTPUT_WEIGHTS.items():
        shared_y[OUTPUT[key]] /= weight
    if X.shape[1] > INPUT_SIZE:
        shared_x[INPUT_SIZE:] = x_std[INPUT_SIZE:].mean()
    for group in list(extra_output_groups) or ([slice(OUTPUT_SIZE, None)] if Y.shape[1] > OUTPUT_SIZE else []):
        shared_y[group] = y_std[group].mean()
    # A group that never varies (e.g. terrain on flat ground only) would divide by zero.
    shared_x = np.where(shared_x > 1e-6, shared_x, 1.0)
    shared_y = np.where(shared_y > 1e-6, shared_y, 1.0)
    return (x_mean.astype(np.float32), shared_x.astype(np.float32), y_mean.astype(np.float32),
            shared_y.astype(np.float32))


SAMPLE_OFFSETS = np.arange(-WINDOW, WINDOW, SAMPLE_STEP)
assert len(SAMPLE_OFFSETS) == SAMPLES
