"""The network's input (342) and output (311) layouts, named in one place (original-demo.md: The network's
inputs and outputs), and the one writer of the input that the simulation and the training
database share.

Nothing else in the package uses raw offsets into X or Y.
"""

from __future__ import annotations

import numpy as np

from .rotation import rotate_y

JOINTS = 31
SAMPLES = 12          # trajectory samples fed to the network: every 10th of 120 frames
SAMPLE_STEP = 10
GAITS = 6
GAIT_NAMES = ("stand", "walk", "jog", "crouch", "jump", "bump")
STAND, WALK, JOG, CROUCH, JUMP, BUMP = range(GAITS)
FUTURE_SAMPLES = 6    # predicted trajectory samples: offsets 0, 10, ..., 50 frames


def _layout(sizes: list[tuple[str, int]]) -> dict[str, slice]:
    out, start = {}, 0
    for name, size in sizes:
        out[name] = slice(start, start + size)
        start += size
    out["_size"] = slice(0, start)
    return out


INPUT = _layout([
    ("trajectory_x", SAMPLES), ("trajectory_z", SAMPLES),
    ("direction_x", SAMPLES), ("direction_z", SAMPLES),
    ("gaits", SAMPLES * GAITS),                 # gait-major: gait g of sample k at 12*g + k
    ("joint_positions", JOINTS * 3), ("joint_velocities", JOINTS * 3),
    ("height_side_pos", SAMPLES),               # terrain at local +X (the original's "right")
    ("height_centre", SAMPLES),
    ("height_side_neg", SAMPLES),               # terrain at local -X
])
OUTPUT = _layout([
    ("root_velocity", 2), ("root_turn", 1), ("phase_step", 1), ("contacts", 4),
    ("future_x", FUTURE_SAMPLES), ("future_z", FUTURE_SAMPLES),
    ("future_direction_x", FUTURE_SAMPLES), ("future_direction_z", FUTURE_SAMPLES),
    ("joint_positions", JOINTS * 3), ("joint_velocities", JOINTS * 3), ("joint_rotations", JOINTS * 3),
])
INPUT_SIZE = INPUT["_size"].stop
OUTPUT_SIZE = OUTPUT["_size"].stop
SIDE_OFFSET = 25.0    # distance of the side terrain samples from the trajectory
# The side samples read the ground over a footprint (Heightmap.sample_footprint) of this radius,
# not at one point: at a block's edge one point's height jumps by the block's height as it moves a
# few units, and a network standing against a block, a side sample on its edge, fed its own small
# sways back through that jump and shook (a MANN strafing into a 55-unit block in the urban scene:
# 68 snapping frames; over the footprint, 8). The original samples one point (0).
SIDE_FOOTPRINT = 6.0
assert INPUT_SIZE == 342 and OUTPUT_SIZE == 311


def side_offsets(yaws: np.ndarray) -> np.ndarray:
    """(..., 3) offsets from trajectory samples facing `yaws` to their side terrain samples (local
    +X, the original's "right"; the other side is the negative), in the yaws' precision."""
    yaws = np.asarray(yaws)
    return rotate_y(np.array([SIDE_OFFSET, 0.0, 0.0], np.result_type(yaws.dtype, np.float32)), yaws)


def write_trajectory_input(x: np.ndarray, trajectory: np.ndarray, directions: np.ndarray, gaits: np.ndarray,
                           heights: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    """Fill the trajectory parts of inputs x (N, 342): the 12 samples' positions and directions in
    the character's frame (N, 12, 3; x and z are fed), their gaits (N, 12, 6; the bump channel is
    fed as 0, as the original demo does: original-demo.md, The network's inputs and outputs), and
    the terrain heights at their +X side, under them and at their -X side relative to the root
    (three (N, 12) arrays)."""
    count = len(x)
    x[:, INPUT["trajectory_x"]] = trajectory[..., 0]
    x[:, INPUT["trajectory_z"]] = trajectory[..., 2]
    x[:, INPUT["direction_x"]] = directions[..., 0]
    x[:, INPUT["direction_z"]] = directions[..., 2]
    gait_major = np.swapaxes(gaits, -1, -2).copy()          # gait g of sample k at 12 g + k
    gait_major[:, BUMP] = 0.0
    x[:, INPUT["gaits"]] = gait_major.reshape(count, -1)
    x[:, INPUT["height_side_pos"]], x[:, INPUT["height_centre"]], x[:, INPUT["height_side_neg"]] = heights


def write_joint_input(x: np.ndarray, positions: np.ndarray, velocities: np.ndarray) -> None:
    """Fill the joint parts of inputs x (N, 342): the previous pose's positions and velocities in
    the previous root's frame (N, 31, 3) each."""
    x[:, INPUT["joint_positions"]] = positions.reshape(len(x), -1)
    x[:, INPUT["joint_velocities"]] = velocities.reshape(len(x), -1)


def read_output(y: np.ndarray) -> dict[str, np.ndarray]:
    """Named views into one output vector (311,) or a batch of them (N, 311); the root turn and
    phase step are floats for one vector, (N,) arrays for a batch."""
    def part(name):
        return y[..., OUTPUT[name]]

    def scalar(name):
        value = part(name)[..., 0]
        return float(value) if y.ndim == 1 else value

    return {
        "root_velocity": part("root_velocity"),
        "root_turn": scalar("root_turn"),
        "phase_step": scalar("phase_step"),
        "contacts": part("contacts"),
        "future_x": part("future_x"),
        "future_z": part("future_z"),
        "future_direction_x": part("future_direction_x"),
        "future_direction_z": part("future_direction_z"),
        "joint_positions": part("joint_positions").reshape(y.shape[:-1] + (JOINTS, 3)),
        "joint_velocities": part("joint_velocities").reshape(y.shape[:-1] + (JOINTS, 3)),
        "joint_rotations": part("joint_rotations").reshape(y.shape[:-1] + (JOINTS, 3)),
    }
