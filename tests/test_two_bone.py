"""The two-bone leg solver shared by the bone-length rebuild and the foot IK: its knees reach,
keep their bone lengths and bend one continuous way."""

from __future__ import annotations

import numpy as np

from pfnn_demo.sim.rotation import axis_angle_matrix
from pfnn_demo.sim.two_bone import leg_turns, place_knees

HIP = np.array([0.0, 100.0, 0.0])
THIGH, SHIN = 40.0, 42.0
FORWARD = np.array([0.0, 0.0, 1.0])


def _wandering_knees(frames: int = 90, lean: float = 6.0) -> np.ndarray:
    """Predicted knees (frames, 3) that circle once round the hip-ankle line, `lean` units off it
    (in front, to the side, behind and back): a network's knee that wanders round a leg it shrank."""
    angle = np.linspace(0.0, 2 * np.pi, frames)
    return np.stack([lean * np.sin(angle), np.full(frames, 55.0), lean * np.cos(angle)], axis=-1)


def test_knees_bend_the_way_the_knee_rotation_points_however_the_predicted_knee_wanders():
    knees = _wandering_knees()
    ankles = np.tile([0.0, 30.0, 5.0], (len(knees), 1))
    hips = np.tile(HIP, (len(knees), 1))
    placed, _ = place_knees(hips, knees, ankles, THIGH, SHIN, np.tile(FORWARD, (len(knees), 1)))
    # Every drawn knee in front of the leg, and the same in every frame: the rotation did not move.
    assert np.all(placed[:, 2] > 10.0)
    assert np.ptp(placed, axis=0).max() < 1e-6
    # Positions alone bend the knee wherever the prediction lies: behind the leg half of the time.
    by_position, _ = place_knees(hips, knees, ankles, THIGH, SHIN)
    assert np.mean(by_position[:, 2] < 0) > 0.3


def test_placed_legs_keep_their_lengths_and_reach_ankles_in_reach():
    rng = np.random.default_rng(4)
    hips = HIP + rng.normal(0.0, 3.0, (200, 3))
    ankles = np.array([0.0, 35.0, 10.0]) + rng.normal(0.0, 8.0, (200, 3))
    knees = (hips + ankles) / 2 + rng.normal(0.0, 6.0, (200, 3))
    forward = np.tile(FORWARD, (200, 1))
    placed, reached = place_knees(hips, knees, ankles, THIGH, SHIN, forward, soft_zone=2.0)
    np.testing.assert_allclose(np.linalg.norm(placed - hips, axis=-1), THIGH, rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(reached - placed, axis=-1), SHIN, rtol=1e-6)
    in_reach = np.linalg.norm(ankles - hips, axis=-1) < THIGH + SHIN - 2.0
    assert in_reach.mean() > 0.9
    np.testing.assert_allclose(reached[in_reach], ankles[in_reach], atol=1e-9)


def _ik_knees(targets: np.ndarray, soft_zone: float) -> np.ndarray:
    """Knees (frames, 3) of a leg bent by `leg_turns` to reach each target in turn."""
    knee, ankle = np.array([0.0, 60.0, 8.0]), np.array([0.0, 20.0, 0.0])
    count = len(targets)
    hips, knees, ankles = (np.tile(p, (count, 1)) for p in (HIP, knee, ankle))
    thigh_turn, _ = leg_turns(hips, knees, ankles, targets, np.tile(FORWARD, (count, 1)), 1.0, soft_zone)
    return hips + np.einsum("nij,nj->ni", thigh_turn, knees - hips)


def test_a_target_passing_out_of_reach_eases_the_knee_straight_instead_of_snapping_it():
    # A target drawn away from the hip at 1 unit per frame, through the leg's full reach.
    full = np.linalg.norm([0.0, 40.0, 8.0]) + np.linalg.norm([0.0, 40.0, 8.0])
    distances = np.linspace(full - 12.0, full + 6.0, 19)
    targets = HIP - distances[:, None] * np.array([0.0, 1.0, 0.0])
    soft, hard = _ik_knees(targets, 2.0), _ik_knees(targets, 0.0)
    jerk = lambda knees: np.linalg.norm(np.diff(knees, n=2, axis=0), axis=-1).max()
    # The hard limit swings the knee in by its last unit of reach much faster than before.
    assert jerk(hard) > 2.0 * jerk(soft)
    assert jerk(soft) < 2.0
    # Reached targets are reached; the knee still bends forwards.
    np.testing.assert_allclose(np.linalg.norm(soft[0] - HIP), np.linalg.norm([0.0, 40.0, 8.0]), rtol=1e-9)
    assert np.all(soft[:-1, 2] > 0.0)


def test_leg_turns_bring_the_heel_to_the_target_in_the_knees_own_plane():
    rng = np.random.default_rng(7)
    count = 100
    hips = np.tile(HIP, (count, 1))
    knees = np.array([0.0, 60.0, 12.0]) + rng.normal(0.0, 2.0, (count, 3))
    ankles = np.array([0.0, 25.0, 0.0]) + rng.normal(0.0, 2.0, (count, 3))
    targets = ankles + rng.normal(0.0, 5.0, (count, 3))
    reach = np.linalg.norm(knees - hips, axis=-1) + np.linalg.norm(ankles - knees, axis=-1)
    in_reach = np.linalg.norm(targets - hips, axis=-1) < reach - 2.0
    assert in_reach.mean() > 0.5
    hips, knees, ankles, targets = hips[in_reach], knees[in_reach], ankles[in_reach], targets[in_reach]
    count = len(hips)
    thigh_turn, shin_turn = leg_turns(hips, knees, ankles, targets, np.tile(FORWARD, (count, 1)), 1.0, 0.0)
    new_knees = hips + np.einsum("nij,nj->ni", thigh_turn, knees - hips)
    new_ankles = new_knees + np.einsum("nij,nj->ni", shin_turn, ankles - knees)
    np.testing.assert_allclose(new_ankles, targets, atol=1e-6)
    # The plane of hip, knee and ankle is the old one swung onto the target (the original's IK).
    old_normal = np.cross(knees - hips, ankles - hips)
    swing = np.cross(ankles - hips, targets - hips)
    angle = np.arccos(np.clip(np.sum((ankles - hips) * (targets - hips), -1)
                              / np.linalg.norm(ankles - hips, axis=-1) / np.linalg.norm(targets - hips, axis=-1), -1, 1))
    rotation = axis_angle_matrix(swing / np.linalg.norm(swing, axis=-1, keepdims=True), angle)
    expected = np.einsum("nij,nj->ni", rotation, old_normal)
    new_normal = np.cross(new_knees - hips, new_ankles - hips)
    cos = np.sum(expected * new_normal, -1) / np.linalg.norm(expected, axis=-1) / np.linalg.norm(new_normal, axis=-1)
    assert cos.min() > 1 - 1e-9
