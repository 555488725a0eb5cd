"""The headless simulation with the original network: parity with the original demo, behaviour, robustness."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pfnn_demo.sim.controller import Controller
from pfnn_demo.sim.headless import simulate
from pfnn_demo.sim.input_script import InputScript
from pfnn_demo.sim.input_state import InputState
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
from pfnn_demo.sim.recording import Recorder
from pfnn_demo.sim.scene import load_scene

from conftest import random_script_dict, require_shared

FPS = 60


def run(weights, script, frames=None, scene="plaza", mode="cubic", **controller_options):
    if isinstance(script, dict):
        script = InputScript.from_dict(script)
    controller = Controller(PhaseFunctionedNetwork(weights, mode), load_scene(scene), **controller_options)
    recorder = Recorder()
    _, failure = simulate(controller, script, frames or script.frames, recorder)
    assert failure is None
    return recorder.arrays(), controller


def segments(*items):
    return {"segments": [dict(duration=d, **fields) for d, fields in items]}


def test_reset_input_equals_golden_first_frame(original_weights, golden_frame):
    controller = Controller(PhaseFunctionedNetwork(original_weights, "constant"), load_scene("plaza"), start_pose="mean")
    controller.step(InputState())
    assert np.max(np.abs(controller.last_input - golden_frame["X"])) < 1e-4
    assert np.max(np.abs(controller.last_output - golden_frame["Y"])) < 1e-4


@pytest.mark.parametrize("name", ["a_walk", "c_turn"])
def test_reproduces_the_original_demo_under_its_scripts(original_weights, name):
    """Same pad input as the original demo's recording: inputs, outputs and poses agree frame by
    frame (the poses as the original draws them: its raw bone lengths and its hard limit of a
    leg's reach)."""
    with np.load(require_shared(f"reference/oracle/{name}.npz")) as data:
        oracle = {key: data[key] for key in ("axes", "X", "Y", "root_position", "joint_positions", "phase")}
    controller = Controller(PhaseFunctionedNetwork(original_weights, "constant"), load_scene("plaza"),
                            keep_bone_lengths=False, start_pose="mean", original_ik=True)
    worst = {"X": 0.0, "Y": 0.0, "root": 0.0, "joints": 0.0}
    for frame, axes in enumerate(oracle["axes"]):
        controller.step(InputState.from_sdl_axes(axes))
        worst["X"] = max(worst["X"], np.max(np.abs(controller.last_input - oracle["X"][frame])))
        worst["Y"] = max(worst["Y"], np.max(np.abs(controller.last_output - oracle["Y"][frame])))
        worst["root"] = max(worst["root"], np.max(np.abs(controller.root_position - oracle["root_position"][frame])))
        worst["joints"] = max(worst["joints"], np.max(np.abs(controller.joint_positions_final
                                                             - oracle["joint_positions"][frame])))
    # Units are about 1 cm: the whole run (10-12 s, closed loop, IK on) stays within 0.1 mm.
    assert worst["X"] < 0.01 and worst["Y"] < 0.01, worst
    assert worst["root"] < 0.01 and worst["joints"] < 0.01, worst


def test_same_script_twice_gives_identical_recordings(original_weights):
    script = random_script_dict(seed=11, seconds=8)
    first, _ = run(original_weights, script)
    second, _ = run(original_weights, script)
    assert first.keys() == second.keys()
    for key in first:
        np.testing.assert_array_equal(first[key], second[key], err_msg=key)


def _speed_and_heading(recording, start_frame):
    root = recording["root_position"][start_frame:]
    displacement = root[-1] - root[0]
    seconds = (len(root) - 1) / FPS
    return np.linalg.norm(displacement[[0, 2]]) / seconds, displacement


def test_walk_forward_speed_and_direction_then_jog_is_faster(original_weights):
    walk, _ = run(original_weights, segments((1, {}), (20, {"move": [0, 1]})))
    jog, _ = run(original_weights, segments((1, {}), (20, {"move": [0, 1], "jog": 1.0})))
    # Stick forward with the camera at yaw 0 (looking along -X) walks along -X; the walls at
    # +-975 stop a 20 s walk, so measure the first 6 s after the start-up.
    early_speed, early = _speed_and_heading({"root_position": walk["root_position"][:9 * FPS]}, 3 * FPS)
    heading = math.degrees(math.atan2(abs(early[2]), -early[0]))
    assert heading < 10, f"walked {heading:.1f} degrees off the stick direction"
    assert 90 < early_speed < 200, f"walking speed {early_speed:.0f} units/s"   # about 0.9-2 m/s
    jog_early, _ = _speed_and_heading({"root_position": jog["root_position"][:6 * FPS]}, 2 * FPS)
    assert jog_early > 1.5 * early_speed, (jog_early, early_speed)
    assert 150 < jog_early < 450, f"jogging speed {jog_early:.0f} units/s"          # about 1.5-4.5 m/s
    # The walls stop the 20 s walk: it never leaves the plaza.
    assert np.all(np.abs(walk["root_position"][:, [0, 2]]) < 975)


def test_180_degree_turn_is_followed_within_1_5_seconds(original_weights):
    recording, _ = run(original_weights, segments((1, {}), (3, {"move": [0, 1]}), (3, {"move": [0, -1]})))
    turn_frame = 4 * FPS
    wanted = np.array([1.0, 0.0, 0.0])   # stick back with the camera looking along -X
    directions = recording["root_direction"][turn_frame:]
    angles = np.degrees(np.arccos(np.clip(directions @ wanted, -1, 1)))
    followed = np.flatnonzero(angles < 20)
    assert len(followed) and followed[0] <= 1.5 * FPS, f"still {angles[int(1.5 * FPS)]:.0f} degrees off after 1.5 s"
    assert np.all(angles[int(1.5 * FPS):] < 30)


def test_root_never_crosses_a_wall_under_random_input(original_weights):
    recording, controller = run(original_weights, random_script_dict(seed=5, seconds=60))
    walls = controller.scene.areas
    root = recording["root_position"][:, [0, 2]].astype(np.float64)
    assert np.all(np.abs(root) < 975), "the root left the walled square"
    # Pushed out to the wall's width (20): never closer than that, up to float rounding.
    assert np.min(walls.wall_distance(root)) > 20 - 1e-3


def test_crouch_area_raises_crouch_gait_and_lowers_the_head(original_weights):
    # Start inside the tunnel's crouch area, walk along it (-X), then out of it sideways (+Z).
    script = segments((1, {}), (4, {"move": [0, 1]}), (4, {"move": [1, 0]}), (3, {"move": [1, 0]}))
    recording, _ = run(original_weights, script, scene="tunnel")
    inside = slice(2 * FPS, 5 * FPS)
    outside = slice(10 * FPS, 12 * FPS)
    crouch = recording["gait"][:, 3]
    assert np.mean(crouch[inside]) > 0.3 and np.mean(crouch[outside]) < 0.05
    head = recording["joint_positions"][:, 16, 1]
    assert np.mean(head[inside]) < np.mean(head[outside]) - 15, (np.mean(head[inside]), np.mean(head[outside]))


def test_ten_thousand_random_frames_stay_finite(original_weights):
    recording, _ = run(original_weights, random_script_dict(seed=7, seconds=10000 / FPS + 2), frames=10000,
                       mode="linear")
    for key, values in recording.items():
        assert np.all(np.isfinite(values)), key


def _contact_feet(recording, threshold):
    """Horizontal speed (units/s) and height of heel and toe joints on frames of their own contact."""
    joints = recording["joint_positions"][:, [4, 5, 9, 10]]
    speed = np.linalg.norm(np.diff(joints[:, :, [0, 2]], axis=0), axis=-1) * FPS
    in_contact = recording["contacts"][1:] > threshold
    return speed[in_contact], joints[1:, :, 1], in_contact


def test_foot_ik_holds_contact_feet_on_the_terrain_and_reduces_sliding(original_weights):
    script = InputScript.load("walk_circle")
    with_ik, _ = run(original_weights, script)
    for segment in script.segments:
        segment.state.ik = False
    without_ik, _ = run(original_weights, script)
    speed_on, heights, contact = _contact_feet(with_ik, 0.5)
    speed_off, _, _ = _contact_feet(without_ik, 0.5)
    assert np.mean(speed_on) < 0.75 * np.mean(speed_off), (np.mean(speed_on), np.mean(speed_off))
    # Bound on flat ground (height 0): in firm contact (> 0.8) the heel joint (the ankle, about
    # 8 above the sole in this skeleton) stays within (0, 10] and the toe joint within (0, 5].
    firm = with_ik["contacts"][1:] > 0.8
    heel_heights = heights[:, [0, 2]][firm[:, [0, 2]]]
    toe_heights = heights[:, [1, 3]][firm[:, [1, 3]]]
    assert len(heel_heights) > 100 and len(toe_heights) > 100
    assert np.all((heel_heights > 0) & (heel_heights <= 10)), (heel_heights.min(), heel_heights.max())
    assert np.all((toe_heights > 0) & (toe_heights <= 5)), (toe_heights.min(), toe_heights.max())


def _standing_pose() -> np.ndarray:
    """(1, 31, 4, 4): the rest pose (no rotations) standing on the ground at height 0, knees a little
    bent (the body 4 units lower, the knees 8 forward), so that the feet can be held a little
    higher than they stand; a straight leg cannot reach up to them."""
    from pfnn_demo.sim.skeleton import JOINT_COUNT, rest_pose_globals

    pose = np.tile(np.eye(4, dtype=np.float32), (1, JOINT_COUNT, 1, 1))
    pose[0, :, :3, 3] = rest_pose_globals()
    pose[..., 1, 3] -= pose[0, :, 1, 3].min() - 4.0
    feet = [4, 5, 9, 10]
    pose[0, np.setdiff1d(np.arange(JOINT_COUNT), feet), 1, 3] -= 4.0
    pose[0, [3, 8], 2, 3] += 8.0
    return pose


@pytest.mark.parametrize("heel_contacts, held", [(True, True), (False, False)])
def test_a_foot_at_a_middling_contact_locks_only_on_a_project_network(heel_contacts, held):
    # A pfnn-demo network's planted feet often report contacts of 0.6-0.8: its IK locks from the
    # labels' midpoint (0.5), the original's at 0.8 (original-demo.md: Locks), so there the foot goes on
    # drifting.
    from pfnn_demo.sim.foot_ik import FootIK
    from pfnn_demo.sim.terrain import Heightmap

    terrain = Heightmap(np.full((64, 64), 6.0, np.float32))    # above the feet: the knees bend to it
    ik = FootIK(1, use_heel_contacts=heel_contacts)
    ik.reset(0, 0.0)
    pose = _standing_pose()
    contacts = np.full((1, 4), 0.65)
    toes = []
    for frame in range(30):                                    # the body drifts 0.1 units a frame
        moved = pose.copy()
        moved[..., 0, 3] += 0.1 * frame
        toes.append(ik.solve(moved, contacts, terrain)[0, [5, 10], :3, 3])
    drift = np.linalg.norm((toes[-1] - toes[1])[:, [0, 2]], axis=-1)      # along the ground
    assert np.all(drift < 0.3) if held else np.all(drift > 2.0), drift


def test_a_foot_back_in_contact_while_its_lock_fades_is_held_again():
    # A contact that dips for a few frames starts the lock's fade; when the contact comes back
    # the foot locks afresh where it is. (Left partly faded, as in the original demo, it was
    # partly pinned to its old spot and slid along with the drifting pose.)
    from pfnn_demo.sim.foot_ik import FootIK
    from pfnn_demo.sim.terrain import Heightmap

    terrain = Heightmap(np.full((64, 64), 6.0, np.float32))
    ik = FootIK(1, use_heel_contacts=True)
    ik.reset(0, 0.0)
    pose = _standing_pose()
    toes = []
    for frame in range(60):                                    # the body drifts 0.1 units a frame
        contact = 0.3 if 10 <= frame < 14 else 0.9             # a four-frame dip: the fade is a third done
        moved = pose.copy()
        moved[..., 0, 3] += 0.1 * frame
        toes.append(ik.solve(moved, np.full((1, 4), contact), terrain)[0, [5, 10], :3, 3])
    assert np.all((ik.lock > 0.99))
    drift = np.linalg.norm((toes[-1] - toes[20])[:, [0, 2]], axis=-1)     # 4 units of body drift
    assert np.all(drift < 0.3), drift


@pytest.mark.parametrize("original", [False, True])
def test_a_lock_the_network_walks_away_from_is_drawn_along_within_its_reach(original):
    # A network may hold a contact above the threshold while it carries the foot on (walking into
    # a jump, 45 units in 0.7 s). Held where it locked, the drawn foot trailed behind the leg and
    # caught up in the few frames of the lock's fade; now it is drawn along LOCK_REACH behind.
    from pfnn_demo.sim.foot_ik import LOCK_REACH, FootIK
    from pfnn_demo.sim.terrain import Heightmap

    terrain = Heightmap(np.full((64, 64), 6.0, np.float32))
    ik = FootIK(1, use_heel_contacts=True, original=original)
    ik.reset(0, 0.0)
    pose = _standing_pose()
    drawn, network = [], []
    for frame in range(80):                                    # the body moves on 1 unit a frame
        moved = pose.copy()
        moved[..., 2, 3] += 1.0 * frame
        drawn.append(ik.solve(moved, np.full((1, 4), 0.9), terrain)[0, [4, 9], :3, 3])
        network.append(moved[0, [4, 9], :3, 3])
    drawn, network = np.array(drawn), np.array(network)
    trail = np.linalg.norm((network - drawn)[..., [0, 2]], axis=-1)        # (frames, legs)
    assert np.all(ik.lock > 0.99)
    if original:
        assert np.all(trail[-1] > LOCK_REACH + 10.0), trail[-1]           # held where it locked
        return
    assert np.all(np.abs(drawn[1:8, :, 2] - drawn[1, :, 2]) < 0.3)        # held while the leg reaches...
    assert np.all(trail < LOCK_REACH + 1.0), trail.max()                  # ...then led along behind
    acceleration = np.linalg.norm(np.diff(drawn, 2, axis=0), axis=-1)
    assert acceleration.max() < 1.5, acceleration.max()                   # units a frame per frame


def test_a_character_with_ik_faded_out_keeps_its_locks_while_its_body_walks_on():
    # `solve` promises that characters at blend 0 keep their locks: switched back on, the drawn
    # foot starts from where it was locked. The leash must not lead those locks meanwhile.
    from pfnn_demo.sim.foot_ik import FootIK
    from pfnn_demo.sim.terrain import Heightmap

    terrain = Heightmap(np.full((64, 64), 6.0, np.float32))
    ik = FootIK(2, use_heel_contacts=True)
    ik.reset(slice(None), 0.0)
    pose = np.repeat(_feet_under_hips(), 2, axis=0)
    ik.solve(pose, np.full((2, 4), 0.9), terrain)
    locked = ik.position.copy()
    for frame in range(1, 80):                                 # both bodies walk 1 unit a frame on
        moved = pose.copy()
        moved[..., 2, 3] += 1.0 * frame
        ik.solve(moved, np.full((2, 4), 0.9), terrain, blend=np.array([1.0, 0.0]))
    assert np.abs(ik.position[0] - locked[0]).max() > 20.0                  # IK on: led along
    np.testing.assert_array_equal(ik.position[1], locked[1])               # IK off: kept


def _feet_under_hips() -> np.ndarray:
    """The standing pose with each foot (heel and toe) moved in across to stand under its hip, as a
    network stands (the rest pose's feet are 28 units out to the side)."""
    from pfnn_demo.sim.foot_ik import LEG_JOINTS

    pose = _standing_pose()
    for leg in range(2):
        feet = LEG_JOINTS[3:, leg]
        pose[0, feet, 0, 3] -= pose[0, LEG_JOINTS[3, leg], 0, 3] - pose[0, LEG_JOINTS[1, leg], 0, 3]
    return pose


def test_a_lock_stays_where_it_landed_while_the_network_splays_its_feet_under_a_still_body():
    # Standing after a stop, a MANN can slide its planted feet apart (heels from side by side to
    # 72 units apart in under 2 s) with its contacts held and its root still: the leash leads only
    # locks the body has walked away from, so the drawn feet stay where they landed.
    from pfnn_demo.sim.foot_ik import HIP_NEAR, LEG_JOINTS, LOCK_REACH, FootIK
    from pfnn_demo.sim.terrain import Heightmap

    terrain = Heightmap(np.full((64, 64), 6.0, np.float32))
    ik = FootIK(1, use_heel_contacts=True)
    ik.reset(0, 0.0)
    pose = _feet_under_hips()
    drawn, network = [], []
    for frame in range(90):                                    # one foot 0.7 units a frame on, one back
        splayed = pose.copy()
        splayed[0, [4, 5], 2, 3] += 0.7 * frame
        splayed[0, [9, 10], 2, 3] -= 0.7 * frame
        drawn.append(ik.solve(splayed, np.full((1, 4), 0.9), terrain)[0, [4, 9], :3, 3])
        network.append(splayed[0, [4, 9], :3, 3])
    drawn, network = np.array(drawn), np.array(network)
    trail = np.linalg.norm((network - drawn)[..., [0, 2]], axis=-1)
    hip = pose[0, LEG_JOINTS[1], :3, 3]
    assert np.all(trail[-1] > LOCK_REACH + 10.0), trail[-1]               # the network's feet went far...
    assert np.all(np.linalg.norm((drawn[-1] - hip)[:, [0, 2]], axis=-1) < HIP_NEAR)
    moved = np.linalg.norm((drawn[2:] - drawn[2])[..., [0, 2]], axis=-1)
    assert moved.max() < 0.3, moved.max()                                 # ...the drawn ones stayed


def test_a_lock_the_network_stepped_far_from_is_led_on_smoothly_once_the_body_follows():
    # The network's heel can run LOCK_REACH and more from a lock while its hip is still near it
    # (a long stride); once the hip walks away too, the leash takes hold over HIP_NEAR to
    # HIP_REACH, not all at once (the heel's whole excess in one frame: a snap).
    from pfnn_demo.sim.foot_ik import HIP_REACH, LEG_JOINTS, LOCK_REACH, FootIK
    from pfnn_demo.sim.terrain import Heightmap

    terrain = Heightmap(np.full((64, 64), 6.0, np.float32))
    ik = FootIK(1, use_heel_contacts=True)
    ik.reset(0, 0.0)
    pose = _feet_under_hips()
    drawn, away, trail = [], [], []
    for frame in range(70):                      # the body 1.5 units a frame, the feet 25 ahead of it
        moved = pose.copy()
        moved[..., 2, 3] += 1.5 * frame
        moved[0, [4, 5, 9, 10], 2, 3] += min(frame, 25.0)
        drawn.append(ik.solve(moved, np.full((1, 4), 0.9), terrain)[0, [4, 9], :3, 3])
        away.append(np.linalg.norm((ik.position[0, 0] - moved[0, LEG_JOINTS[1], :3, 3])[:, [0, 2]], axis=-1))
        trail.append(np.linalg.norm((ik.position[0, 0] - moved[0, [4, 9], :3, 3])[:, [0, 2]], axis=-1))
    drawn = np.array(drawn)
    assert np.all(np.array(trail).max(axis=0) > LOCK_REACH + 5.0)           # the heel ran far ahead
    assert np.all(np.array(away).max(axis=0) < HIP_REACH)                  # the lock was led before...
    pace = np.diff(drawn[-10:, :, 2], axis=0)
    assert np.all(np.abs(pace - 1.5) < 0.2), pace                          # ...and goes with the body
    acceleration = np.linalg.norm(np.diff(drawn, 2, axis=0), axis=-1)
    assert acceleration.max() < 2.0, acceleration.max()                   # units a frame per frame


def _drawn_toes_as_the_network_turns_its_feet(terrain, original: bool, degrees_a_frame: float,
                                              heels_too: bool) -> tuple:
    """Foot IK over 50 frames of the standing pose, planted: for 10 frames still, then each foot's
    toe turning `degrees_a_frame` about its heel (and the heel's rotation with it, `heels_too`).
    The IK and the drawn toes (frames, 2, 3)."""
    from pfnn_demo.sim.foot_ik import FootIK
    from pfnn_demo.sim.rotation import axis_angle_matrix

    ik = FootIK(1, use_heel_contacts=True, original=original)
    ik.reset(0, 0.0)
    pose = _standing_pose()
    toes = []
    for frame in range(50):
        turned = pose.copy()
        turn = axis_angle_matrix(np.array([0.0, 1.0, 0.0]),
                                 np.radians(degrees_a_frame * max(frame - 10, 0))).astype(np.float32)
        for heel, toe in ((4, 5), (9, 10)):
            pivot = pose[0, heel, :3, 3]
            if heels_too:
                turned[0, [heel, toe], :3, :3] = turn @ pose[0, [heel, toe], :3, :3]
            turned[0, toe, :3, 3] = pivot + turn @ (pose[0, toe, :3, 3] - pivot)
        toes.append(ik.solve(turned, np.full((1, 4), 0.9), terrain)[0, [5, 10], :3, 3])
    return ik, np.array(toes)


@pytest.mark.parametrize("original", [False, True])
def test_a_locked_foot_on_rough_ground_stays_still_while_the_network_turns_it(original):
    # After a stop a network often gathers its feet under a lock: its foot turns while the drawn
    # one is held. The original levels the held heel on terrain sampled across the network's foot,
    # so off the flat the turning swept the samples and rolled the drawn foot, moving its toe while
    # standing (on a slope, most of a unit as the foot turns 40 degrees; up to 4 units/s over
    # rocks); a locked foot now keeps the axis across it that it locked with.
    from pfnn_demo.sim.terrain import Heightmap

    grid = np.arange(-64, 64, dtype=np.float32)
    x, z = np.meshgrid(grid, grid, indexing="ij")
    terrain = Heightmap(2.0 + 0.8 * (x + z), cell_size=1.0)                 # a slope, diagonal to the feet
    # The smoothed ground settles, then each foot turns 1 degree a frame.
    ik, toes = _drawn_toes_as_the_network_turns_its_feet(terrain, original, 1.0, heels_too=True)
    moved = np.linalg.norm(toes[-1] - toes[10], axis=-1)
    assert np.all(ik.lock > 0.99)
    assert np.all(moved > 0.5) if original else np.all(moved < 0.05), moved


@pytest.mark.parametrize("original", [False, True])
def test_a_locked_toe_stays_put_while_the_network_turns_it_under_a_still_heel(original):
    # A network's toe position and its heel's rotation come from different outputs, and standing
    # after a strafe a network turned its toes 12 degrees round heels whose axes stayed put. The
    # original aims the heel's forward axis at the locked toe, so the drawn toe swept round with
    # the network's (2-3 units/s); the heel is now turned so that the toe itself points there.
    from pfnn_demo.sim.terrain import Heightmap

    terrain = Heightmap(np.full((64, 64), 6.0, np.float32))
    # Locked, then each toe turns 0.5 degrees a frame round its heel.
    ik, toes = _drawn_toes_as_the_network_turns_its_feet(terrain, original, 0.5, heels_too=False)
    moved = np.linalg.norm(toes[-1] - toes[10], axis=-1)
    assert np.all(ik.lock > 0.99)
    assert np.all(moved > 1.5) if original else np.all(moved < 0.05), moved


def test_a_state_saved_before_feet_held_their_roll_restores_each_locked_foot_on_its_drawn_heel():
    from pfnn_demo.sim.networks import load_network_file
    from pfnn_demo.sim.skeleton import LEFT_LEG, RIGHT_LEG

    controller = Controller(load_network_file("network/pfnn.npz", "cubic"), load_scene("rocky"), characters=2)
    for _ in range(60):
        controller.step(InputState())
    state = controller.crowd.state()
    del state["ik_across"]
    controller.crowd.restore(state)
    heels = controller.crowd.global_transforms[:, [LEFT_LEG["heel"], RIGHT_LEG["heel"]]][..., :3, 0]
    np.testing.assert_allclose(controller.crowd.ik.across, heels, atol=1e-6)
    for _ in range(30):
        controller.step(InputState())
    assert np.all(np.isfinite(controller.crowd.global_transforms))
