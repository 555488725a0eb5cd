"""Motion out: BVH export, replaying a recording's inputs, the replay window, screenshots of a
recorded frame, and destinations refused before any work."""

from __future__ import annotations

import os

import numpy as np
import pygame
import pytest

from pfnn_demo import JOINT_NAMES, REST_OFFSETS, Controller, load_network, load_scene
from pfnn_demo.tools.cli import main
from pfnn_demo.app.demo import TICK, Demo
from pfnn_demo.sim.headless import simulate
from pfnn_demo.sim.input_script import InputScript
from pfnn_demo.motion.bvh import read_bvh
from pfnn_demo.motion.bvh_export import joints_with_translations, motion_from_world
from pfnn_demo.app.playback import Playback
from pfnn_demo.sim.recording import Recorder, load_recording
from pfnn_demo.app.render.offscreen import OffscreenTarget
from pfnn_demo.app.replay_demo import ReplayDemo
from pfnn_demo.sim.rotation import axis_angle_matrix
from pfnn_demo.sim.skeleton import PARENTS, forward_kinematics

from conftest import make_random_weights
from test_cli import FailingNetwork


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """The shipped network walking the circle on the hills, recorded as .npz and as .bvh."""
    folder = tmp_path_factory.mktemp("played")
    for suffix in ("npz", "bvh"):
        assert main(["run", "--headless", "--script", "walk_circle", "--scene", "hills", "--frames", "400",
                     "--record", str(folder / f"walk.{suffix}")]) == 0
    return folder


def test_bvh_export_puts_every_joint_where_it_was_drawn(played):
    recording = load_recording(played / "walk.npz")
    motion = read_bvh(played / "walk.bvh")
    assert motion.names == list(JOINT_NAMES) and motion.frames == recording.frames == 400
    assert motion.frame_time == pytest.approx(1 / 60, abs=1e-7)
    np.testing.assert_allclose(motion.offsets, REST_OFFSETS, atol=1e-5)      # the skeleton the network drives
    drawn = recording.arrays["joint_positions"]
    read_back = motion.global_transforms()[..., :3, 3]
    assert np.abs(read_back - drawn).max() < 0.01
    # Its rotations are the drawn ones too (the root's and, through the hierarchy, every joint's).
    np.testing.assert_allclose(motion.global_transforms()[..., :3, :3], recording.arrays["joint_rotations"], atol=1e-4)
    # A network's bones stretch, so the joints whose offsets vary carry translations; the root always.
    moving = joints_with_translations(motion)
    assert "LeftLeg" in moving and motion.channels[0][:3] == ["Xposition", "Yposition", "Zposition"]


def test_a_pose_that_keeps_its_bone_lengths_exports_rotations_only():
    rng = np.random.default_rng(4)
    frames = 30
    local = np.tile(np.eye(4), (frames, len(JOINT_NAMES), 1, 1))
    axes = rng.normal(size=(frames, len(JOINT_NAMES), 3))
    local[..., :3, :3] = axis_angle_matrix(axes / np.linalg.norm(axes, axis=-1, keepdims=True),
                                           rng.uniform(-1.5, 1.5, (frames, len(JOINT_NAMES))))
    local[..., :3, 3] = REST_OFFSETS
    local[:, 0, :3, 3] = rng.normal(0, 100, (frames, 3))
    world = forward_kinematics(local, PARENTS)
    motion = motion_from_world(world[..., :3, 3], world[..., :3, :3], 1 / 60)
    assert joints_with_translations(motion) == []
    assert sum(len(c) for c in motion.channels) == 6 + 3 * (len(JOINT_NAMES) - 1)
    np.testing.assert_allclose(motion.global_transforms()[..., :3, 3], world[..., :3, 3], atol=1e-6)


def test_replaying_a_recordings_inputs_gives_the_same_frames(played, tmp_path):
    assert main(["run", "--replay-input", str(played / "walk.npz"), "--record", str(tmp_path / "again.npz")]) == 0
    first, second = np.load(played / "walk.npz"), np.load(tmp_path / "again.npz")
    assert sorted(first.files) == sorted(second.files)
    for key in first.files:
        np.testing.assert_array_equal(first[key], second[key], err_msg=key)


def test_a_recording_made_mid_play_in_the_window_replays_exactly(gl, tmp_path):
    """Started with F5 in the middle of play, with the camera dragged, crouch toggled and the mode
    switched while recording, stopped from the menu: the inputs and the start state drive the
    controller to the same frames."""
    demo = Demo(gl, load_network(mode="cubic"), "jumps", record_dir=tmp_path / "takes", record_formats=("npz", "bvh"))
    target = OffscreenTarget(gl, (320, 240))
    demo.on_key(pygame.K_w, True)
    for frame in range(240):
        if frame == 60:
            demo.on_key(pygame.K_F5, True)
            demo.on_key(pygame.K_F5, False)
            assert demo.recording
        if frame == 90:
            demo.on_mouse_drag(120, -30)
            demo.on_key(pygame.K_LSHIFT, True)
        if frame == 130:
            demo.on_key(pygame.K_c, True)
            demo.on_key(pygame.K_c, False)
        if frame == 150:
            demo.on_key(pygame.K_m, True)        # cubic -> constant, live
        demo.update(TICK)
        if frame % 40 == 0:
            demo.render(target.framebuffer)      # the HUD shows REC while recording
    demo.open_menu()
    entries = demo.menu.page.entries
    index = next(i for i, entry in enumerate(entries) if entry.label().startswith("Recording: stop"))
    assert "(180 frames)" in entries[index].label()
    demo.menu.selected = index
    demo.menu.navigate("select")
    assert not demo.recording and not demo.menu.open
    written = sorted((tmp_path / "takes").iterdir())
    assert [path.suffix for path in written] == [".bvh", ".npz"]
    assert str(written[1]) in demo.note             # the file is named on screen
    recorded = np.load(written[1])
    assert len(recorded["phase"]) == 180
    assert {str(recorded["mode_names"][i]) for i in recorded["frame_mode"]} == {"cubic", "constant"}
    assert main(["run", "--replay-input", str(written[1]), "--record", str(tmp_path / "again.npz")]) == 0
    again = np.load(tmp_path / "again.npz")
    for key in ("joint_positions", "joint_rotations", "root_position", "contacts", "phase", "trajectory_positions"):
        np.testing.assert_array_equal(recorded[key], again[key], err_msg=key)
    np.testing.assert_allclose(read_bvh(written[0]).global_transforms()[..., :3, 3], recorded["joint_positions"],
                               atol=0.01)


def test_the_pads_y_button_records_and_an_unwritable_folder_is_said_on_screen(gl, tmp_path):
    from virtual_gamepad import VirtualGamepad

    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the folder should be")
    demo = Demo(gl, load_network(), "plaza", record_dir=blocker / "takes", record_formats=("npz",))
    pad = VirtualGamepad()
    try:
        demo.update(TICK)
        pad.button("y", True)
        demo.update(TICK)
        pad.button("y", False)
        demo.update(TICK)
        assert not demo.recording and "Cannot record" in demo.note and "not a folder" in demo.note
        demo.record_dir = tmp_path / "takes"
        for _ in range(2):                            # press Y, play a second, press Y
            pad.button("y", True)
            demo.update(TICK)
            pad.button("y", False)
            for _ in range(60):
                demo.update(TICK)
    finally:
        pad.detach()
    (written,) = (tmp_path / "takes").iterdir()
    assert load_recording(written).frames == 61 and str(written) in demo.note


def test_a_failure_keeps_the_frames_before_it_in_either_format(tmp_path):
    controller = Controller(FailingNetwork(make_random_weights(seed=5), fail_after=25), load_scene("plaza"),
                            start_pose="mean")   # its calls are counted from the first frame
    recorder = Recorder(controller)
    _, failure = simulate(controller, InputScript.load("walk_circle"), 100, recorder)
    assert failure is not None
    recorder.save(tmp_path / "kept.npz", "plaza", "cubic", "test")
    recorder.save(tmp_path / "kept.bvh", "plaza", "cubic", "test")
    assert load_recording(tmp_path / "kept.npz").frames == 25
    assert read_bvh(tmp_path / "kept.bvh").frames == 25


@pytest.mark.parametrize("arguments, message", [
    (["run", "--headless", "--script", "walk_circle", "--record", "{file}/rec.npz"], "is a file, not a folder"),
    (["run", "--headless", "--script", "walk_circle", "--record", "{dir}"], "must end in .npz or .bvh"),
    (["run", "--headless", "--script", "walk_circle", "--record", "{dir}/rec.txt"], "must end in .npz or .bvh"),
    (["screenshot", "{file}/shot.png"], "is a file, not a folder"),
    (["screenshot", "{dir}/shot.gif"], "must end in .png"),
])
def test_an_unwritable_destination_is_refused_before_the_simulation(arguments, message, tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    arguments = [a.format(file=blocker, dir=tmp_path) for a in arguments]
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert message in err and "simulating" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into read-only folders")
def test_a_read_only_folder_is_refused(tmp_path, capsys):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert main(["run", "--headless", "--script", "walk_circle", "--record", str(folder / "rec.npz")]) == 2
        assert "cannot be written" in capsys.readouterr().err
    finally:
        folder.chmod(0o700)


def _character_pixels(image: np.ndarray) -> np.ndarray:
    """(H, W) pixels of the character's warm colour; the terrain and the HUD's text are grey."""
    return image[..., 0].astype(int) - image[..., 2].astype(int) > 25


def test_replay_window_pauses_steps_and_changes_speed(gl, played):
    playback = Playback(load_recording(played / "walk.npz"), load_scene("hills"))
    replay = ReplayDemo(gl, playback, "walk.npz")
    target = OffscreenTarget(gl, (320, 240))
    recorded = load_recording(played / "walk.npz").global_transforms()
    for _ in range(30):
        replay.update(TICK)
    assert playback.frame == 30
    np.testing.assert_array_equal(playback.global_transforms, recorded[30])     # what the renderer draws
    replay.render(target.framebuffer)
    before = _character_pixels(target.read())
    assert before.sum() > 200
    replay.on_key(pygame.K_SPACE, True)
    for _ in range(30):
        replay.update(TICK)
    assert playback.paused and playback.frame == 30
    np.testing.assert_array_equal(playback.global_transforms, recorded[30])     # paused: the pose holds
    replay.on_key(pygame.K_RIGHT, True)
    replay.on_key(pygame.K_RIGHT, True)
    assert playback.frame == 32
    replay.on_key(pygame.K_LEFT, True)
    assert playback.frame == 31
    for _ in range(30):                           # move the pose on, then look again
        replay.on_key(pygame.K_PERIOD, True)
    np.testing.assert_array_equal(playback.global_transforms, recorded[61])
    replay.render(target.framebuffer)
    after = _character_pixels(target.read())
    # The character is drawn in another pose: a good part of its pixels moved.
    assert (before ^ after).sum() > 0.2 * before.sum()
    replay.on_key(pygame.K_SPACE, True)
    replay.on_key(pygame.K_RIGHTBRACKET, True)
    start = playback.frame
    for _ in range(30):
        replay.update(TICK)
    assert playback.speed == 2.0 and playback.frame == start + 60
    np.testing.assert_array_equal(playback.global_transforms, recorded[start + 60])
    replay.on_key(pygame.K_ESCAPE, True)
    assert replay.quit_requested


def test_screenshot_of_a_recorded_frame(played, tmp_path):
    for frame in (10, 300):
        assert main(["screenshot", str(tmp_path / f"f{frame}.png"), "--replay", str(played / "walk.npz"),
                     "--frame", str(frame), "--size", "320x240"]) == 0
    pictures = [pygame.surfarray.array3d(pygame.image.load(str(tmp_path / f"f{k}.png"))) for k in (10, 300)]
    assert np.abs(pictures[0].astype(int) - pictures[1].astype(int)).mean() > 1.0   # a different pose and place
    # A BVH export shows the same frame (same pose, no HUD differences when the HUD is left out).
    for name in ("walk.npz", "walk.bvh"):
        assert main(["screenshot", str(tmp_path / f"{name}.png"), "--replay", str(played / name), "--frame", "300",
                     "--scene", "hills", "--no-hud", "--no-debug", "--camera-yaw", "0", "--size", "320x240"]) == 0
    npz, bvh = (pygame.surfarray.array3d(pygame.image.load(str(tmp_path / f"{n}.png"))) for n in ("walk.npz", "walk.bvh"))
    assert np.abs(npz.astype(int) - bvh.astype(int)).max() <= 8
    assert main(["screenshot", str(tmp_path / "x.png"), "--replay", str(played / "walk.npz"), "--frame", "400"]) == 2


def test_a_bvh_cannot_drive_the_simulation(played, capsys):
    assert main(["run", "--replay-input", str(played / "walk.bvh")]) == 2
    assert "holds no inputs" in capsys.readouterr().err


def test_a_corrupt_or_foreign_recording_is_one_clear_line(played, tmp_path, capsys):
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes((played / "walk.npz").read_bytes()[:4000])
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, weights=np.zeros(3))
    for arguments, message in ((["replay", str(truncated)], "truncated or corrupt"),
                               (["run", "--replay-input", str(truncated)], "truncated or corrupt"),
                               (["screenshot", str(tmp_path / "x.png"), "--replay", str(foreign)],
                                "is not a pfnn-demo recording"),
                               (["replay", str(tmp_path / "missing.npz")], "no such recording")):
        assert main(arguments) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
