"""The network's input (342) and output (311) layouts, named in one place (spec 5.3, 5.4).

Nothing else in the package uses raw offsets into X or Y.
"""

from __future__ import annotations

import numpy as np

JOINTS = 31
SAMPLES = 12          # trajectory samples fed to the network: every 10th of 120 frames
SAMPLE_STEP = 10
GAITS = 6             # stand, walk, jog, crouch, jump, bump
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
assert INPUT_SIZE == 342 and OUTPUT_SIZE == 311


def read_output(y: np.ndarray) -> dict[str, np.ndarray]:
    """Named views into one output vector."""
    return {
        "root_velocity": y[OUTPUT["root_velocity"]],
        "root_turn": float(y[OUTPUT["root_turn"]][0]),
        "phase_step": float(y[OUTPUT["phase_step"]][0]),
        "contacts": y[OUTPUT["contacts"]],
        "future_x": y[OUTPUT["future_x"]],
        "future_z": y[OUTPUT["future_z"]],
        "future_direction_x": y[OUTPUT["future_direction_x"]],
        "future_direction_z": y[OUTPUT["future_direction_z"]],
        "joint_positions": y[OUTPUT["joint_positions"]].reshape(JOINTS, 3),
        "joint_velocities": y[OUTPUT["joint_velocities"]].reshape(JOINTS, 3),
        "joint_rotations": y[OUTPUT["joint_rotations"]].reshape(JOINTS, 3),
    }
