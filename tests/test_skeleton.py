"""Skeleton data and forward kinematics."""

from __future__ import annotations

import numpy as np

from pfnn_demo.sim.rotation import axis_angle_matrix
from pfnn_demo.sim.skeleton import (JOINT_COUNT, JOINT_NAMES, PARENTS, forward_kinematics, local_from_global,
                                rest_pose_globals)


def test_hierarchy_is_consistent():
    assert len(JOINT_NAMES) == len(PARENTS) == JOINT_COUNT == 31
    assert PARENTS[0] == -1 and all(PARENTS[i] < i for i in range(1, JOINT_COUNT))


def test_rest_pose_has_the_left_side_on_plus_x_and_feet_below_the_hips():
    rest = rest_pose_globals()
    names = {name: i for i, name in enumerate(JOINT_NAMES)}
    assert rest[names["LeftFoot"], 0] > 0 > rest[names["RightFoot"], 0]
    assert rest[names["LeftToeBase"], 2] > rest[names["LeftFoot"], 2]          # toes point to +Z
    leg = rest[names["Hips"], 1] - rest[names["LeftToeBase"], 1]
    assert 85 < leg < 105                                                      # about 1 cm units
    assert rest[names["Head"], 1] > rest[names["Neck1"], 1] > 0


def test_forward_kinematics_inverts_local_from_global():
    rng = np.random.default_rng(0)
    axes = rng.normal(size=(JOINT_COUNT, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    local = np.tile(np.eye(4), (JOINT_COUNT, 1, 1))
    local[:, :3, :3] = axis_angle_matrix(axes, rng.uniform(-1, 1, JOINT_COUNT))
    local[:, :3, 3] = rng.normal(size=(JOINT_COUNT, 3)) * 10
    global_ = forward_kinematics(local)
    # The chain rule, checked for one deep joint by hand.
    chain, joint = [], 22
    while joint >= 0:
        chain.append(joint)
        joint = PARENTS[joint]
    expected = np.eye(4)
    for j in reversed(chain):
        expected = expected @ local[j]
    np.testing.assert_allclose(global_[22], expected, atol=1e-9)
    np.testing.assert_allclose(local_from_global(global_), local, atol=1e-9)
