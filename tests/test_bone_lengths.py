"""Drawn poses keep the skeleton's bone lengths; the feet stay where the network put them."""

from __future__ import annotations

import numpy as np

from pfnn_demo.sim.bone_lengths import REST_LENGTHS, bone_length_deviation, keep_bone_lengths
from pfnn_demo.sim.two_bone import SOFT_REACH, place_knees
from pfnn_demo.sim.skeleton import PARENTS, rest_pose_globals


def stretched_poses(count: int = 50, seed: int = 3) -> np.ndarray:
    """Rest poses with knees bent and every joint jittered, so bones stretch by up to ~30 %."""
    rng = np.random.default_rng(seed)
    poses = np.repeat(rest_pose_globals()[None].astype(np.float64), count, axis=0)
    poses[:, [3, 8], 2] += 12.0                  # knees forward: the legs bend
    poses[:, [0, 1, 2, 6, 7, 11, 12]] += np.array([0.0, -8.0, 0.0])   # the pelvis lower: ankles in reach
    return poses + rng.normal(0.0, 1.5, poses.shape)


def test_every_bone_gets_its_rest_length():
    poses = stretched_poses()
    assert bone_length_deviation(poses).max() > 0.1
    kept = keep_bone_lengths(poses)
    assert bone_length_deviation(kept).max() < 1e-6
    # Helper joints (zero rest offset) sit on their parents.
    helpers = np.flatnonzero(REST_LENGTHS == 0)[1:]
    np.testing.assert_allclose(kept[:, helpers], kept[:, PARENTS[helpers]], atol=1e-9)


def test_ankles_in_reach_stay_put_and_bones_keep_their_direction():
    poses = stretched_poses()
    kept = keep_bone_lengths(poses)
    # Ankles in reach stay exactly where they were; within the last SOFT_REACH units of a leg's
    # reach they are eased in along the leg, by less than SOFT_REACH.
    full = REST_LENGTHS[[3, 8]] + REST_LENGTHS[[4, 9]]
    reach = np.linalg.norm(poses[:, [4, 9]] - kept[:, [2, 7]], axis=-1)
    easy = reach < full - SOFT_REACH
    assert easy.mean() > 0.8 and not easy.all()
    np.testing.assert_allclose(kept[:, [4, 9]][easy], poses[:, [4, 9]][easy], atol=1e-9)
    moved = np.linalg.norm(kept[:, [4, 9]] - poses[:, [4, 9]], axis=-1)[~easy]
    assert np.all(moved < SOFT_REACH), moved
    # The spine and arms point where the network pointed them.
    for joint in (12, 13, 16, 19, 20, 26, 27):
        a = poses[:, joint] - poses[:, PARENTS[joint]]
        b = kept[:, joint] - kept[:, PARENTS[joint]]
        cos = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        assert cos.min() > 1 - 1e-9


def test_an_ankle_out_of_reach_is_drawn_in_along_the_leg():
    hips = np.array([[0.0, 100.0, 0.0]])
    knees, ankles = place_knees(hips, np.array([[0.0, 60.0, 5.0]]), np.array([[0.0, 0.0, 0.0]]), 40.0, 42.0)
    assert np.linalg.norm(ankles - hips) < 82.0 and ankles[0, 1] > 18.0 - 1e-3
    np.testing.assert_allclose(np.linalg.norm(knees - hips), 40.0, rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(ankles - knees), 42.0, rtol=1e-6)
