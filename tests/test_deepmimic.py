"""DeepMimic motions in the repository: reading, retargeting, looping, BVH export, stops."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pfnn_demo.motion.bvh import read_bvh, write_bvh
from pfnn_demo.motion.deepmimic import (DeepMimicError, SOURCE_INDEX, TO_DEMO, canonical_world_rotations,
                                        leg_length_metres, load_deepmimic, read_deepmimic, tile_loop,
                                        to_canonical_motion)
from pfnn_demo.sim.skeleton import BVH_TO_DEMO_UNITS, JOINT_NAMES

from conftest import REPO

MOTIONS = REPO / "data" / "motions"


@pytest.fixture(scope="module")
def walk():
    return read_deepmimic(MOTIONS / "humanoid3d_walk.txt")


def test_the_shipped_motions_read_and_carry_their_licence():
    files = sorted(MOTIONS.glob("*.txt"))
    motions = [f for f in files if f.name != "LICENSE.txt"]
    assert len(motions) == 3
    assert "zlib" in (MOTIONS / "README.md").read_text() and "Permission is granted" in (MOTIONS / "LICENSE.txt").read_text()
    for file in motions:
        motion = read_deepmimic(file)
        assert motion.frames > 20 and motion.loops
        assert np.allclose(np.linalg.det(motion.rotations), 1.0, atol=1e-6)


@pytest.mark.parametrize("content, message", [
    ("not json", "cannot read"),
    (json.dumps({"Frames": []}), "at least 2 frames"),
    (json.dumps({"Frames": [[0.03] * 43, [0.03] * 43]}), "44 numbers"),
    (json.dumps({"Frames": [[0.03] + [0.0] * 43] * 2}), "zero quaternion"),
    (json.dumps({"Frames": [[-0.03] + [1.0] * 43] * 2}), "positive"),
])
def test_bad_files_get_a_specific_error(tmp_path, content, message):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(DeepMimicError, match=message) as error:
        read_deepmimic(path)
    assert "bad.txt" in str(error.value)


def test_retargeting_keeps_every_bone_pointing_where_the_source_points(walk):
    motion = to_canonical_motion(walk)
    canonical = motion.global_transforms(BVH_TO_DEMO_UNITS)[..., :3, 3]
    source = walk.world_positions() @ TO_DEMO.T
    pairs = {("LeftUpLeg", "LeftLeg"): ("left_hip", "left_knee"), ("LeftLeg", "LeftFoot"): ("left_knee", "left_ankle"),
             ("RightUpLeg", "RightLeg"): ("right_hip", "right_knee"),
             ("RightArm", "RightForeArm"): ("right_shoulder", "right_elbow")}
    for (a, b), (sa, sb) in pairs.items():
        ours = canonical[:, JOINT_NAMES.index(b)] - canonical[:, JOINT_NAMES.index(a)]
        theirs = source[:, SOURCE_INDEX[sb]] - source[:, SOURCE_INDEX[sa]]
        cosine = np.sum(ours * theirs, axis=1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
        assert cosine.min() > 0.9999, (a, b)
    # The root path is scaled by the leg-length ratio: the hips walk as far in legs as the source's.
    scale = np.linalg.norm(canonical[-1, 0, [0, 2]] - canonical[0, 0, [0, 2]]) / np.linalg.norm(
        walk.root_positions[-1, [0, 2]] - walk.root_positions[0, [0, 2]])
    leg = np.linalg.norm(canonical[0, 3] - canonical[0, 2]) + np.linalg.norm(canonical[0, 4] - canonical[0, 3])
    assert scale == pytest.approx(leg / leg_length_metres(), rel=0.01)
    # It walks forward along +Z, upright, toes ahead of heels.
    assert canonical[-1, 0, 2] - canonical[0, 0, 2] > 100
    assert np.all(canonical[:, 16, 1] > canonical[:, 0, 1] + 25)
    assert np.median(canonical[:, 5, 2] - canonical[:, 4, 2]) > 5


def test_arms_hang_down_although_the_canonical_rest_pose_is_a_t_pose(walk):
    canonical = to_canonical_motion(walk).global_transforms(BVH_TO_DEMO_UNITS)[..., :3, 3]
    arm = canonical[:, JOINT_NAMES.index("LeftHand")] - canonical[:, JOINT_NAMES.index("LeftArm")]
    assert np.all(arm[:, 1] < -0.8 * np.linalg.norm(arm, axis=1))


def test_a_looping_cycle_tiles_without_seams(walk):
    tiled = tile_loop(walk, 4)
    assert tiled.frames == 4 * (walk.frames - 1)
    steps = np.linalg.norm(np.diff(tiled.root_positions, axis=0), axis=1)
    assert steps.max() < 1.5 * np.percentile(steps, 95)
    rotations = canonical_world_rotations(tiled)
    change = np.linalg.norm(np.diff(rotations, axis=0), axis=(-2, -1)).max(axis=1)
    assert change.max() < 3.0 * np.percentile(change, 95)


def test_retargeted_clips_export_as_bvh_and_read_back_the_same(tmp_path):
    motion = load_deepmimic(MOTIONS / "humanoid3d_run.txt", seconds=2.0)
    write_bvh(motion, tmp_path / "run.bvh")
    again = read_bvh(tmp_path / "run.bvh")
    assert again.names == list(JOINT_NAMES) and again.frames == motion.frames
    np.testing.assert_allclose(again.global_transforms()[..., :3, 3], motion.global_transforms()[..., :3, 3], atol=1e-3)


def test_the_retarget_command_writes_a_bvh(tmp_path):
    from pfnn_demo.tools.cli import main
    out = tmp_path / "walk.bvh"
    assert main(["retarget", str(MOTIONS / "humanoid3d_walk.txt"), str(out), "--seconds", "3"]) == 0
    motion = read_bvh(out)
    assert motion.frames * motion.frame_time >= 3.0 - 1e-6


def test_stops_stand_still_on_one_phase():
    from pfnn_demo.tools.train.database import clip_from_motion
    from pfnn_demo.tools.train.synthesis import loop_cycles, stops

    clip = loop_cycles(clip_from_motion(load_deepmimic(MOTIONS / "humanoid3d_walk.txt", 8.0), "walk"), 12.0)
    made = stops(clip, np.random.default_rng(0), 2)
    assert len(made) == 2
    for stop in made:
        speed = np.linalg.norm(np.diff(stop.positions[:, 0, [0, 2]], axis=0), axis=1) * 60
        standing = stop.gaits[1:, 0] > 0.99
        assert standing.sum() > 60                                       # a second or more of standing
        assert np.all(speed[standing] < 10.0) and np.median(speed[standing]) < 0.5
        assert speed[:60].mean() > 60 and speed[-60:].mean() > 60         # walking before and after
        dphase = np.mod(np.diff(stop.phase), 1.0)
        assert np.median(dphase[standing]) == 0.0 and np.all(dphase < 0.1)  # one phase for one stance
        assert np.median(dphase[:60]) > 0.01 and np.median(dphase[-60:]) > 0.01
        feet = stop.positions[1:, [4, 5, 9, 10]][standing]
        assert np.ptp(feet, axis=0).max() < 1.0                           # the feet stay put (1 cm)


@pytest.mark.parametrize("degrees", [90.0, -135.0, 180.0])
def test_turning_starts_turn_the_body_and_walk_off_the_new_way_from_planted_feet(degrees):
    from pfnn_demo.tools.train.database import clip_from_motion, facing_yaw
    from pfnn_demo.tools.train.synthesis import loop_cycles, plant_feet, setting_off_frames, stops, turning_start

    clip = loop_cycles(clip_from_motion(load_deepmimic(MOTIONS / "humanoid3d_walk.txt", 8.0), "walk"), 12.0)
    stop = stops(clip, np.random.default_rng(0), 1)[0]
    onsets = setting_off_frames(stop)
    assert len(onsets) == 1                                       # the one start after the stand
    onset = int(onsets[0])
    turned = plant_feet(turning_start(stop, onset, np.radians(degrees)))
    stop = plant_feet(stop)
    before = slice(0, onset - 30)
    np.testing.assert_allclose(turned.positions[before], stop.positions[before], atol=1e-2)   # untouched before
    yaw = lambda c: np.unwrap(facing_yaw(c.positions.astype(np.float64)))                   # noqa: E731
    turn = (yaw(turned) - yaw(stop))[onset + 90:]
    assert np.degrees(turn) == pytest.approx(np.full(len(turn), degrees), abs=1.0)          # faces the new way
    # and walks that way: the path 1.3 s after setting off is the old one turned by the angle.
    def heading(c, a, b):
        step = c.positions[b, 0, [0, 2]] - c.positions[a, 0, [0, 2]]
        return np.arctan2(step[0], step[1])
    change = np.angle(np.exp(1j * (heading(turned, onset + 80, onset + 140) - heading(stop, onset + 80, onset + 140))))
    assert np.degrees(change) == pytest.approx(degrees, abs=5.0) or abs(degrees) == 180 and abs(np.degrees(change)) > 175
    # Feet planted while turning: the toes in contact slide no more than in the straight start.
    assert _planted_toe_speed(turned) < _planted_toe_speed(stop) + 2.0


def test_reversals_slow_down_turn_round_and_walk_off_facing_the_new_way():
    from pfnn_demo.tools.train.database import clip_from_motion, facing_yaw
    from pfnn_demo.tools.train.synthesis import REVERSAL_ANGLES, loop_cycles, plant_feet, reversals

    clip = loop_cycles(clip_from_motion(load_deepmimic(MOTIONS / "humanoid3d_walk.txt", 8.0), "walk"), 12.0)
    made = reversals(clip, np.random.default_rng(1), 3)
    assert len(made) == 3
    for reversal in map(plant_feet, made):
        onset = int(reversal.name.split("@")[1])
        yaw = np.unwrap(facing_yaw(reversal.positions.astype(np.float64)))
        angle = float(reversal.name.split("_start")[1].split("@")[0])
        assert angle in np.round(np.degrees(REVERSAL_ANGLES))
        # Turned round by that angle (within the looped walk's own slow drift and sway).
        turn = np.degrees(yaw[-60:].mean() - yaw[onset - 80:onset - 20].mean())
        assert abs(np.angle(np.exp(1j * np.radians(turn - angle)))) < np.radians(20.0)
        speed = np.linalg.norm(np.diff(reversal.positions[:, 0, [0, 2]], axis=0), axis=1) * 60
        assert speed[onset - 60:onset + 1].min() < 10.0 < 50.0 < speed[onset + 40:].mean()   # pause, then walk
        # The steps go where the body faces, before the turn and after it.
        step = np.diff(reversal.positions[:, 0, [0, 2]].astype(np.float64), axis=0)
        away = np.angle(np.exp(1j * (np.arctan2(step[:, 0], step[:, 1]) - yaw[:-1])))
        walking = speed > 40.0
        assert np.degrees(np.abs(away[walking])).mean() < 20.0
        assert _planted_toe_speed(reversal) < 4.0


def test_pivoting_reversals_turn_while_slowing_and_keep_the_same_draws():
    from pfnn_demo.tools.train.database import clip_from_motion, facing_yaw
    from pfnn_demo.tools.train.synthesis import loop_cycles, plant_feet, reversals

    clip = loop_cycles(clip_from_motion(load_deepmimic(MOTIONS / "humanoid3d_walk.txt", 8.0), "walk"), 12.0)
    late, pivoting = reversals(clip, np.random.default_rng(1), 3), reversals(clip, np.random.default_rng(1), 3, pivot=True)
    assert [r.name for r in late] == [r.name for r in pivoting]        # the same stops and angles
    for before, after in zip(late, pivoting):
        onset = int(after.name.split("@")[1])
        angle = abs(float(after.name.split("_start")[1].split("@")[0]))
        speed = np.linalg.norm(np.diff(after.positions[:, 0, [0, 2]], axis=0), axis=1) * 60
        slowest = onset - 60 + int(np.argmin(speed[onset - 60:onset]))

        def turned(made, frame):
            yaw = np.degrees(np.unwrap(facing_yaw(made.positions.astype(np.float64))))
            return abs(yaw[frame] - yaw[onset - 90])

        # Pivoting, the body has turned a good part of the way by the slowest frame; the late
        # turn has hardly begun there. Both end facing the new way.
        assert turned(after, slowest) > 0.3 * angle > turned(before, slowest) + 10.0
        assert abs(turned(after, len(speed) - 1) - turned(before, len(speed) - 1)) < 10.0
        assert _planted_toe_speed(plant_feet(after)) < 4.0


@pytest.fixture(scope="module")
def looped_walk():
    from pfnn_demo.tools.train.database import clip_from_motion
    from pfnn_demo.tools.train.synthesis import loop_cycles
    return loop_cycles(clip_from_motion(load_deepmimic(MOTIONS / "humanoid3d_walk.txt", 8.0), "walk"), 6.0)


@pytest.fixture(scope="module")
def looped_run():
    from pfnn_demo.tools.train.database import clip_from_motion
    from pfnn_demo.tools.train.synthesis import loop_cycles
    return loop_cycles(clip_from_motion(load_deepmimic(MOTIONS / "humanoid3d_run.txt", 8.0), "run"), 6.0)


def _planted_toe_speed(clip) -> float:
    """Mean horizontal speed (units/s) of toes labelled in contact: the sliding a clip teaches."""
    toes = clip.positions[:, [5, 10]][:, :, [0, 2]]
    speed = np.linalg.norm(np.diff(toes, axis=0), axis=-1) * 60
    planted = clip.contacts[1:, [1, 3]] > 0.5
    return float(speed[planted].mean())


def _bone_lengths(clip) -> np.ndarray:
    from pfnn_demo.sim.skeleton import PARENTS
    return np.linalg.norm(clip.positions[:, 1:] - clip.positions[:, PARENTS[1:]], axis=-1)


def test_crouching_lowers_the_body_and_keeps_the_feet_and_the_bones(looped_walk):
    from pfnn_demo.tools.train.synthesis import crouch

    low = crouch(looped_walk, 30.0, 0.4)
    np.testing.assert_allclose(low.positions[:, [4, 5, 9, 10]], looped_walk.positions[:, [4, 5, 9, 10]], atol=1e-4)
    assert np.allclose(low.positions[:, 0, 1], looped_walk.positions[:, 0, 1] - 30.0, atol=1e-3)
    head_ratio = np.median(low.positions[:, 16, 1]) / np.median(looped_walk.positions[:, 16, 1])
    assert 0.65 < head_ratio < 0.85                                            # the labeller's crouch band
    np.testing.assert_allclose(_bone_lengths(low), _bone_lengths(looped_walk), atol=0.5)
    assert np.all(low.gaits[:, 3] == 1.0)
    # Knees bend forward, ahead of the line from hip to ankle.
    yaw = np.arctan2(low.positions[:, 5, 0] - low.positions[:, 4, 0], low.positions[:, 5, 2] - low.positions[:, 4, 2])
    forward = np.stack([np.sin(yaw), np.cos(yaw)], axis=1)
    knee_ahead = np.sum((low.positions[:, 3, [0, 2]] - 0.5 * (low.positions[:, 2, [0, 2]] + low.positions[:, 4, [0, 2]]))
                        * forward, axis=1)
    assert np.median(knee_ahead) > 5.0


@pytest.mark.parametrize("degrees", [90.0, -90.0, 180.0])
def test_side_steps_move_sideways_facing_ahead_with_planted_feet(looped_walk, degrees):
    from pfnn_demo.tools.train.database import facing_yaw
    from pfnn_demo.tools.train.synthesis import side_step

    side = side_step(looped_walk, np.radians(degrees))
    yaw = facing_yaw(side.positions.astype(np.float64))
    np.testing.assert_allclose(yaw, facing_yaw(looped_walk.positions.astype(np.float64)), atol=0.05)
    root = side.positions[:, 0, [0, 2]].astype(np.float64)
    step = np.diff(root, axis=0)
    heading = np.arctan2(step[:, 0], step[:, 1])
    offset = np.angle(np.exp(1j * (heading - yaw[:-1])))
    assert np.degrees(np.angle(np.mean(np.exp(1j * offset)))) == pytest.approx(degrees if degrees != 180 else 180, abs=15) or \
        (degrees == 180 and abs(np.degrees(np.angle(np.mean(np.exp(1j * offset))))) > 165)
    assert _planted_toe_speed(side) < 2.0 * _planted_toe_speed(looped_walk) + 2.0
    # Legs keep their lengths (a stretched stride may miss its ankle target by a centimetre or so).
    np.testing.assert_allclose(_bone_lengths(side)[:, [2, 3, 7, 8]], _bone_lengths(looped_walk)[:, [2, 3, 7, 8]], atol=1.5)


def test_jog_side_steps_jog_off_the_facing_at_the_jogs_cadence(looped_run):
    from pfnn_demo.tools.train.database import facing_yaw
    from pfnn_demo.tools.train.pipeline import JOG_SIDE_STEPS, SIDE_STEP_TURNS, jog_side_steps

    sides = jog_side_steps([looped_run], np.random.default_rng(0))
    sideways = jog_side_steps([looped_run], np.random.default_rng(0), "sideways")
    assert len(sideways) == 2 * len(SIDE_STEP_TURNS)                                 # left and right only
    assert len(sides) == len(SIDE_STEP_TURNS) * JOG_SIDE_STEPS                       # each direction straight and curving both ways
    straight = sides[0]
    assert straight.gaits[:, 2].mean() == pytest.approx(looped_run.gaits[:, 2].mean())   # still a jog

    def offset(clip) -> float:
        """Degrees between where the root goes and where the body faces, on average."""
        yaw = facing_yaw(clip.positions.astype(np.float64))
        step = np.diff(clip.positions[:, 0, [0, 2]].astype(np.float64), axis=0)
        return np.degrees(np.angle(np.mean(np.exp(1j * (np.arctan2(step[:, 0], step[:, 1]) - yaw[:-1])))))

    assert abs(offset(straight)) > 30                                # it runs off its facing
    assert abs(abs(offset(sideways[0])) - 90) < 20, offset(sideways[0])   # straight to one side
    np.testing.assert_array_equal(straight.phase, looped_run.phase)  # at the jog's own cadence
    assert _planted_toe_speed(straight) < 2.0 * _planted_toe_speed(looped_run) + 2.0


def test_strafe_changes_turn_the_stepping_direction_with_the_body_facing_ahead(looped_walk):
    from pfnn_demo.tools.train.database import facing_yaw
    from pfnn_demo.tools.train.pipeline import strafe_changes

    def turn_rate(clip):   # rad/s of the facing direction, mean over the clip
        yaw = np.unwrap(facing_yaw(clip.positions.astype(np.float64)))
        return (yaw[-1] - yaw[0]) / clip.frames * 60

    for change in strafe_changes(looped_walk, np.random.default_rng(4), count=3):
        first, second = (np.radians(float(a)) for a in change.name.split("_strafe")[1].split("to"))
        yaw = facing_yaw(change.positions.astype(np.float64))
        # Facing ahead throughout: the body turns only as the captured walk itself curves.
        assert turn_rate(change) == pytest.approx(turn_rate(looped_walk), abs=0.03)
        step = np.diff(change.positions[:, 0, [0, 2]].astype(np.float64), axis=0)
        offset = np.angle(np.exp(1j * (np.arctan2(step[:, 0], step[:, 1]) - yaw[:-1])))

        def heading(frames):   # mean stepping direction relative to the facing, over a whole stride
            return np.angle(np.mean(np.exp(1j * offset[frames])))

        def off_by(a, b):
            return abs(np.degrees(np.angle(np.exp(1j * (a - b)))))

        assert off_by(heading(slice(0, 90)), first) < 20.0
        assert off_by(heading(slice(-90, None)), second) < 20.0
        dphase = np.mod(np.diff(change.phase), 1.0)
        assert np.all(dphase < 0.05) and np.all(dphase > 0.0)
        assert _planted_toe_speed(change) < 2.0 * _planted_toe_speed(looped_walk) + 2.0


def test_gait_transitions_blend_walk_into_jog_in_phase(looped_walk, looped_run):
    from pfnn_demo.tools.train.synthesis import transition

    change = transition(looped_walk, looped_run, 2.0, 0.8, 2.0)
    speed = np.linalg.norm(np.diff(change.positions[:, 0, [0, 2]], axis=0), axis=1) * 60
    assert speed[:90].mean() < 150 < 250 < speed[-90:].mean()
    assert change.gaits[0, 1] == pytest.approx(1.0) and change.gaits[-1, 2] == pytest.approx(1.0)
    dphase = np.mod(np.diff(change.phase), 1.0)
    assert np.all(dphase < 0.05) and np.all(dphase > 0.0)                 # continuous, never backwards
    joint_step = np.linalg.norm(np.diff(change.positions, axis=0), axis=-1).max(axis=1)
    assert joint_step.max() < 1.5 * max(np.percentile(joint_step[:90], 99), np.percentile(joint_step[-90:], 99))
    assert _planted_toe_speed(change) < 1.5 * max(_planted_toe_speed(looped_walk), _planted_toe_speed(looped_run))


def test_synthesis_is_seeded_and_long():
    from pfnn_demo.tools.train.pipeline import extended, load_clips

    clips = load_clips(MOTIONS, log=lambda text: None)
    first = extended(clips[:3])
    again = extended(clips[:3])
    assert [c.name for c in first] == [c.name for c in again]
    np.testing.assert_array_equal(first[-1].positions, again[-1].positions)
    assert sum(c.frames for c in first) / 60 > 5 * 60                       # minutes of motion from 3 clips


def test_rolling_ground_keeps_planted_feet_on_it_and_feeds_the_terrain_inputs(looped_walk):
    from pfnn_demo.sim.features import INPUT
    from pfnn_demo.tools.train.database import clip_windows
    from pfnn_demo.tools.train.synthesis import RollingGround, on_terrain

    ground = RollingGround(np.random.default_rng(3), 25.0)
    hilly = on_terrain(looped_walk, ground)
    for heel, column in ((4, 0), (9, 2)):
        planted = looped_walk.contacts[:, column] > 0.5
        flat_height = looped_walk.positions[planted, heel, 1]
        over_ground = hilly.positions[planted, heel, 1] - ground(hilly.positions[planted, heel, 0],
                                                                 hilly.positions[planted, heel, 2])
        assert abs(np.median(over_ground) - np.median(flat_height)) < 1.5
    # The hips ride the terrain: about as high above the ground under them as on the flat.
    hips_over = hilly.positions[:, 0, 1] - ground(hilly.positions[:, 0, 0], hilly.positions[:, 0, 2])
    assert abs(np.median(hips_over) - np.median(looped_walk.positions[:, 0, 1])) < 6.0
    X, _, _ = clip_windows(hilly, ground)
    assert X[:, INPUT["height_side_pos"]].std() > 2.0
    X_flat, _, _ = clip_windows(looped_walk)
    assert X_flat[:, INPUT["height_side_pos"]].std() == 0.0


def test_walking_down_a_slope_puts_planted_toes_on_the_ground_under_them(looped_walk):
    """Down a slope each toe is lower than its heel: raised only as far as the ground under the
    heel, a planted toe floated a slope's drop over a foot's length above its own ground."""
    from pfnn_demo.tools.train.synthesis import on_terrain

    root = looped_walk.positions[:, 0].astype(np.float64)
    ahead = (root[-1] - root[0])[[0, 2]] / np.linalg.norm((root[-1] - root[0])[[0, 2]])

    def downhill(x, z):
        return -0.3 * (np.asarray(x) * ahead[0] + np.asarray(z) * ahead[1])

    sloped = on_terrain(looped_walk, downhill)
    for heel, toe, column in ((4, 5, 1), (9, 10, 3)):
        planted = looped_walk.contacts[:, column] > 0.5
        on_flat = np.median(looped_walk.positions[planted, toe, 1])
        toes = sloped.positions[planted, toe].astype(np.float64)
        assert abs(np.median(toes[:, 1] - downhill(toes[:, 0], toes[:, 2])) - on_flat) < 1.0
        length = np.linalg.norm(looped_walk.positions[:, toe] - looped_walk.positions[:, heel], axis=1)
        pitched = np.linalg.norm(sloped.positions[:, toe] - sloped.positions[:, heel], axis=1)
        np.testing.assert_allclose(pitched, length, rtol=1e-4)


def test_rolling_ground_carries_the_body_no_harder_than_the_ground_rises_and_falls(looped_walk):
    from pfnn_demo.tools.train.synthesis import RollingGround, on_terrain

    ground = RollingGround(np.random.default_rng(3), 25.0)
    hilly = on_terrain(looped_walk, ground)

    def vertical_acceleration(height):
        return float(np.abs(np.diff(height.astype(np.float64), n=2)).mean() * 3600)

    # Lowering the body where a leg cannot reach once jerked the hips up and down 2.1x as hard as
    # the ground under them rises and falls.
    hips = hilly.positions[:, 0]
    riding = looped_walk.positions[:, 0, 1] + ground(hips[:, 0], hips[:, 2])
    assert vertical_acceleration(hips[:, 1]) < 1.3 * vertical_acceleration(riding)
    assert vertical_acceleration(hips[:, 1]) < 1.6 * vertical_acceleration(looped_walk.positions[:, 0, 1])


def test_slow_jogs_take_shorter_strides_at_a_running_cadence(looped_run, looped_walk):
    from pfnn_demo.tools.train.synthesis import (JOG_SPEEDS, MIN_JOG_CADENCE, WALK_SPEEDS, at_speed, speed_changes, speed_of,
                                           time_warp)

    changes = speed_changes(looped_run)
    jogs = [at_speed(looped_run, rate, stride) for rate, stride in changes]
    np.testing.assert_allclose([speed_of(jog) for jog in jogs], JOG_SPEEDS, rtol=0.05)
    slowest_rate, slowest_stride = changes[0]
    assert slowest_rate >= MIN_JOG_CADENCE and slowest_stride < 0.8          # not a slow-motion run
    assert _planted_toe_speed(jogs[0]) < _planted_toe_speed(looped_run)     # shorter strides, feet still planted
    same_cadence = time_warp(looped_run, slowest_rate)
    # The legs keep their lengths, but for a few frames of a leg stretched out in flight.
    change = np.abs(_bone_lengths(jogs[0])[:, [2, 3, 7, 8]] - _bone_lengths(same_cadence)[:, [2, 3, 7, 8]])
    assert np.percentile(change, 95) < 1.0 and change.max() < 4.0              # units (about 1 cm)
    # Walks change their cadence only.
    assert all(stride == 1.0 for _, stride in speed_changes(looped_walk))
    np.testing.assert_allclose([speed_of(at_speed(looped_walk, *c)) for c in speed_changes(looped_walk)], WALK_SPEEDS,
                               rtol=0.05)


def test_a_30_fps_source_is_doubled_without_shaking_at_its_frame_rate():
    from pfnn_demo.sim.skeleton import BVH_TO_DEMO_UNITS
    from pfnn_demo.tools.evaluation import mean_acceleration, shake
    from pfnn_demo.tools.train import database

    motion = load_deepmimic(MOTIONS / "humanoid3d_run.txt", 8.0)
    assert round(1.0 / motion.frame_time) == 30
    world = database.retarget_to_canonical(motion).global_transforms(BVH_TO_DEMO_UNITS)
    straight = database._resample(world, np.arange(0, world.shape[0] - 1e-9, 0.5))[..., :3, 3]
    clip = database.clip_from_motion(motion, "run")
    smooth = clip.positions.astype(np.float64)
    # Interpolated straight between source frames, every joint's acceleration spikes at 30 Hz.
    assert shake(smooth) < 0.35 * shake(straight)
    assert mean_acceleration(smooth) > 0.75 * mean_acceleration(straight)       # the steps are kept

    def speed(p):
        return np.linalg.norm(p[-1, 0, [0, 2]] - p[0, 0, [0, 2]]) / len(p)
    assert abs(speed(smooth) / speed(straight[:len(smooth)]) - 1) < 0.02
    np.testing.assert_allclose(np.linalg.det(clip.rotations[::50].astype(np.float64)), 1.0, atol=1e-4)


@pytest.fixture(scope="module")
def captured_jump():
    """The captured CMU forward jump (crouch, take-off, flight, landing), labelled as training does."""
    from pfnn_demo.tools.train.pipeline import load_clips
    return next(c for c in load_clips(REPO / "data", log=lambda text: None) if c.name == "16_07")


def _flight(clip) -> np.ndarray:
    from pfnn_demo.tools.train.labels import longest_flight
    return longest_flight(clip.contacts > 0.5)


def test_a_running_jump_keeps_the_pace_through_a_flight_labelled_as_a_jump(looped_run, captured_jump):
    from pfnn_demo.tools.train.synthesis import at_speed, running_jump, speed_changes, speed_of

    run = at_speed(looped_run, *speed_changes(looped_run)[-1])
    jump = running_jump(run, captured_jump)
    flight = _flight(jump)
    assert len(flight) >= 0.8 * len(_flight(captured_jump))          # the captured flight, whole
    root = jump.positions[:, 0].astype(np.float64)
    speed = np.linalg.norm(np.diff(root[:, [0, 2]], axis=0), axis=1) * 60
    assert speed[flight].mean() == pytest.approx(speed_of(run), rel=0.1)   # the run's pace in the air
    # The body rises in the flight as in the captured jump, from the run's height.
    rise = root[flight, 1].max() - root[:flight[0] - 30, 1].mean()
    captured = captured_jump.positions[:, 0, 1].astype(np.float64)
    assert rise == pytest.approx(captured[_flight(captured_jump)].max() - captured[0], abs=12.0)
    # Labelled a jump around the flight only; the run's phase meets the captured jump's own
    # labels where the blend into it begins (0.3 s before the take-off).
    assert np.all(jump.gaits[flight, 4] > 0.9)
    assert np.all(jump.gaits[:flight[0] - 30, 4] < 0.01) and np.all(jump.gaits[flight[-1] + 40:, 4] < 0.01)
    blend = int(0.3 * 60)
    assert jump.phase[flight[0] - blend] == pytest.approx(captured_jump.phase[_flight(captured_jump)[0] - blend],
                                                          abs=0.02)


def test_a_bar_under_a_jump_is_cleared_by_every_foot_and_feeds_the_terrain_inputs(looped_run, captured_jump):
    from pfnn_demo.sim.features import INPUT
    from pfnn_demo.tools.train.database import clip_windows
    from pfnn_demo.tools.train.synthesis import BAR_CLEARANCE, at_speed, over_a_bar, plant_feet, running_jump

    jump = plant_feet(running_jump(at_speed(looped_run, 1.0, 1.0), captured_jump))
    barred = over_a_bar(jump, 20.0, 15.0)
    assert barred is not None and barred.ground.height == pytest.approx(20.0)
    feet = barred.positions[:, [4, 5, 9, 10]].astype(np.float64)
    under = barred.ground(feet[..., 0], feet[..., 2])
    assert (under > 1.0).any()                                        # the flight passes over it
    assert np.all((feet[..., 1] - under)[under > 0] >= BAR_CLEARANCE - 1e-3)   # and no heel or toe touches it
    # Feet on the ground stand on flat ground: the bar is only under the flight.
    planted = barred.contacts > 0.5
    assert np.all(under[planted] < 1e-6)
    X, _, _ = clip_windows(barred)
    assert X[:, INPUT["height_centre"]].max() > 15.0                  # the network sees the bar coming
    # A bar the feet cannot clear is not built.
    assert over_a_bar(jump, 200.0, 15.0) is None


def test_jumps_over_bars_take_each_jump_from_standing_and_at_the_slowest_jog_speeds(looped_run, captured_jump):
    from pfnn_demo.tools.train.pipeline import BARS_PER_JUMP, RUNNING_JUMP_JOGS, jumps_over_bars
    from pfnn_demo.tools.train.synthesis import BarGround, at_speed, speed_changes, speed_of

    made = jumps_over_bars([], [looped_run], [captured_jump], np.random.default_rng(0))
    speeds = speed_changes(looped_run)
    assert len(speeds) > RUNNING_JUMP_JOGS
    # from standing, then at the slowest jog speeds, each over BARS_PER_JUMP different bars
    assert len(made) == BARS_PER_JUMP * (1 + RUNNING_JUMP_JOGS)
    assert len({clip.ground.half_width for clip in made}) == len(made)      # every bar another one
    next_speed = speed_of(at_speed(looped_run, *speeds[RUNNING_JUMP_JOGS]))
    assert all(speed_of(clip) < next_speed for clip in made[1:])
    assert all(isinstance(clip.ground, BarGround) and clip.ground.height >= 7.0 for clip in made)
    assert made[0].frames == captured_jump.frames and made[-1].frames > captured_jump.frames + 200
