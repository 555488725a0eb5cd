"""Many characters stepped together: equal to each stepped alone, keeping apart and inside the walls,
headless and in the window."""

from __future__ import annotations

import copy
import subprocess
import sys

import numpy as np
import pygame
import pytest

from pfnn_demo.app.demo import Demo
from pfnn_demo.app.render.offscreen import OffscreenTarget
from pfnn_demo.library import load_network
from pfnn_demo.motion.bvh import read_bvh
from pfnn_demo.sim.controls import Controls
from pfnn_demo.sim.crowd import Crowd
from pfnn_demo.sim.input_script import InputScript
from pfnn_demo.sim.recording import load_recording
from pfnn_demo.sim.scene import load_scene, steps_crossing_walls
from pfnn_demo.sim.wander import CrowdBehaviour, spawn_points
from pfnn_demo.tools.cli import main

TICK = 1 / 60
CHARACTER_ALBEDO = np.array([255, 230, 153])   # the character's colour before lighting, roughly


def one_row(controls: Controls, i: int) -> Controls:
    return Controls(*(np.array(getattr(controls, field)[i:i + 1]) for field in
                      ("move", "camera_yaw", "strafe", "jog", "crouch", "responsive", "ik")))


@pytest.mark.parametrize("mode", ["cubic", "constant"])
def test_characters_stepped_together_equal_each_stepped_alone(mode, original_weights):
    """Six characters under different inputs (wandering, jogging, turning, crouching) for 360
    frames together, then each alone under its own inputs: the same poses frame by frame. With
    the original network: the shipped one amplifies the rounding differences below (0.1 units
    by frame 186), the original keeps them under 0.01."""
    from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork

    scene, count = load_scene("tunnel"), 6
    network = PhaseFunctionedNetwork(original_weights, mode)
    starts = spawn_points(scene, count, seed=3)
    behaviour = CrowdBehaviour(scene, count, seed=3)
    crowd = Crowd(network, scene, count, starts=starts)
    inputs, poses, phases = [], [], []
    for frame in range(360):
        controls = behaviour.next_controls(crowd.root_positions[:, [0, 2]])
        controls.move[0] = (np.sin(frame / 40), 1.0)               # the "player": weaving, jogging, crouching
        controls.camera_yaw[0] = 0.01 * frame
        controls.jog[0] = float(120 <= frame < 220)
        controls.crouch[0] = frame >= 260
        inputs.append(copy.deepcopy(controls))
        crowd.step(controls)
        poses.append(crowd.joint_positions_final.copy())
        phases.append(crowd.phase.copy())
    poses, phases = np.array(poses), np.array(phases)
    assert np.ptp(poses[:, :, 0, 0], axis=0).min() > 50, "every character moved"
    for i in range(count):
        alone = Crowd(network, scene, 1, starts=starts[i:i + 1])
        for frame, controls in enumerate(inputs):
            alone.step(one_row(controls, i))
            # Within 0.01 units (0.1 mm): one matrix product for six rows rounds a little
            # differently from six products of one row; nothing else differs.
            assert np.max(np.abs(alone.joint_positions_final[0] - poses[frame, i])) < 0.01, (i, frame)
            assert abs(alone.phase[0] - phases[frame, i]) < 1e-3, (i, frame)


@pytest.mark.parametrize("scene_name, count, seconds", [("plaza", 24, 25), ("urban", 16, 15)])
def test_wanderers_walk_keep_apart_and_stay_inside_the_walls(scene_name, count, seconds):
    scene = load_scene(scene_name)
    network = load_network(None, "cubic")
    behaviour = CrowdBehaviour(scene, count, seed=1)
    crowd = Crowd(network, scene, count, starts=spawn_points(scene, count, seed=1))
    roots = []
    for _ in range(seconds * 60):
        crowd.step(behaviour.next_controls(crowd.root_positions[:, [0, 2]]))
        roots.append(crowd.root_positions[:, [0, 2]])
    roots = np.array(roots)                                     # (T, N, 2)
    walls = scene.areas.walls
    for t in range(1, len(roots)):
        assert not steps_crossing_walls(walls, roots[t - 1], roots[t]).any(), f"a character crossed a wall at frame {t}"
    assert scene.areas.wall_distance(roots.reshape(-1, 2)).min() > walls[:, 4].min() - 1e-3

    wanderers = roots[:, 1:]
    speed = np.linalg.norm(np.diff(wanderers, axis=0), axis=-1) * 60
    assert 50 < speed.mean() < 300, speed.mean()                # they walk (about 1-3 m/s) ...
    assert 0.05 < np.mean(speed < 20) < 0.6                      # ... and stand now and then
    travelled = np.linalg.norm(wanderers[-1] - wanderers[0], axis=-1)
    assert np.median(travelled) > 200

    # Apart: closer than 40 units (bodies touching) rarely, and never for more than a second.
    i, j = np.triu_indices(count - 1, 1)
    distance = np.linalg.norm(wanderers[:, i] - wanderers[:, j], axis=-1)   # (T, pairs)
    close = distance < 40
    assert close.mean() < 0.005
    longest = 0
    for pair in close.T:
        runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], pair.astype(int), [0]]))))[::2]
        longest = max(longest, runs.max(initial=0))
    assert longest <= 60, f"two characters overlapped for {longest} frames"


def test_wanderers_crouch_through_the_crouch_area():
    scene = load_scene("tunnel")
    cx, _, cz, size_x, size_z = scene.areas.crouches[0]
    behaviour = CrowdBehaviour(scene, 2, seed=0)
    behaviour.wander.goal[0] = (cx, cz)                          # send the wanderer into the tunnel
    behaviour.wander.wait[0] = 0
    crowd = Crowd(load_network(None, "cubic"), scene, 2, starts=np.array([scene.start, (cx + size_x / 2 + 250, cz)]))
    inside = []
    for _ in range(600):
        controls = behaviour.next_controls(crowd.root_positions[:, [0, 2]])
        crowd.step(controls)
        x, z = crowd.root_positions[1, [0, 2]]
        if abs(x - cx) < size_x / 2 - 30 and abs(z - cz) < size_z / 2 - 30:
            inside.append((bool(controls.crouch[1]), crowd.gaits[1, 3], bool(np.any(controls.move[1]))))
    walking = [gait for _, gait, pushed in inside if pushed]
    assert len(walking) > 30, "the wanderer never walked into the tunnel"
    assert all(flag for flag, _, _ in inside)
    # Crouched while it walks through; at its goal inside it stands, and standing outweighs
    # crouching in the gait (original-demo.md: Gait), so those frames are left out.
    assert np.mean(walking) > 0.3


def test_headless_crowd_records_every_character_and_one_replays_alone(tmp_path, capsys):
    out = tmp_path / "crowd.npz"
    assert main(["run", "--headless", "--script", "walk_circle", "--frames", "240", "--characters", "8",
                 "--crowd-script", "jog_and_stop", "--record", str(out)]) == 0
    with np.load(out) as data:
        assert int(data["characters"]) == 8
        assert data["joint_positions"].shape == (8, 240, 31, 3) and data["inputs"].shape == (8, 240, 13)
        assert data["phase"].shape == (8, 240) and data["frame_mode"].shape == (240,)
        script = InputScript.load("jog_and_stop")
        expected = np.array([(s.move_x, s.move_y) for s in map(script.state, range(240))])
        np.testing.assert_allclose(data["stick"][1], expected)      # character 1 followed its script
        recorded = data["joint_positions"][3]
    with pytest.raises(Exception, match="crowd of 8 characters"):
        load_recording(out)
    again = tmp_path / "three.npz"
    assert main(["run", "--headless", "--replay-input", str(out), "--member", "3", "--record", str(again)]) == 0
    assert np.max(np.abs(np.load(again)["joint_positions"] - recorded)) < 0.01
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--headless", "--script", "walk_circle", "--characters", "2000"])
    assert exit_info.value.code == 2
    assert "argument --characters: 2000 is out of range (1 to 1024)" in capsys.readouterr().err


def test_crowd_bvh_export_writes_one_file_per_character(tmp_path):
    run = ["run", "--headless", "--script", "walk_circle", "--frames", "90", "--characters", "3"]
    assert main(run + ["--record", str(tmp_path / "bvh" / "take.bvh")]) == 0
    assert sorted(p.name for p in (tmp_path / "bvh").iterdir()) == ["take.bvh", "take_1.bvh", "take_2.bvh"]
    assert main(run + ["--record", str(tmp_path / "take.npz")]) == 0          # the same play, deterministic
    with np.load(tmp_path / "take.npz") as recording:
        drawn = recording["joint_positions"]                                # (3, 90, 31, 3)
    for character, name in enumerate(["take.bvh", "take_1.bvh", "take_2.bvh"]):
        motion = read_bvh(tmp_path / "bvh" / name)
        assert motion.frames == 90
        np.testing.assert_allclose(motion.global_transforms()[:, :, :3, 3], drawn[character], atol=1e-2)
    # Three characters walking apart: the files differ.
    assert np.abs(drawn[1] - drawn[2]).max() > 10.0


def character_pixels(image: np.ndarray) -> int:
    """Pixels of the characters' warm yellow (lit or shaded), not the grey terrain or blue sky."""
    r, g, b = (image[..., k].astype(int) for k in range(3))
    return int(np.sum((r - b > 40) & (g - b > 25)))


def test_the_window_draws_the_crowd_and_the_menu_sizes_it(gl):
    demo = Demo(gl, load_network(None, "cubic"), "plaza")
    target = OffscreenTarget(gl, (480, 270))
    demo.options.debug = False
    demo.controller.camera.distance = 800                  # far enough to see a crowd around the player
    demo.on_key(pygame.K_w, True)
    for _ in range(60):
        demo.update(TICK)
    player = demo.controller.root_position
    demo.render(target.framebuffer)
    alone = character_pixels(target.read())

    demo.open_menu()
    entries = demo.menu.page.entries
    index = next(i for i, entry in enumerate(entries) if entry.label().startswith("Characters"))
    demo.menu.selected = index
    for _ in range(4):
        demo.menu.navigate("right")                        # 1 -> 2 -> 4 -> 8 -> 16
    assert demo.characters == 16 and "16" in entries[index].label()
    demo.menu.close()
    np.testing.assert_array_equal(demo.controller.root_position, player)   # the player carried on
    demo.on_key(pygame.K_w, True)
    for _ in range(120):
        demo.update(TICK)
    assert np.linalg.norm(demo.controller.root_position - player) > 100   # still under control
    demo.options.debug = False
    demo.render(target.framebuffer)
    crowd = character_pixels(target.read())
    assert crowd > 3 * alone, (alone, crowd)
    demo.on_key(pygame.K_LEFTBRACKET, True)
    assert demo.characters == 8


def test_the_simulation_imports_neither_pygame_nor_moderngl():
    code = ("import sys, pfnn_demo, pfnn_demo.sim.crowd, pfnn_demo.sim.wander, pfnn_demo.sim.headless, "
            "pfnn_demo.sim.recording; bad = [m for m in ('pygame', 'moderngl', 'moderngl_window') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_step_runs_any_kind_through_its_policy():
    """A kind without a phase plugs in by registering a policy: the same step, no phase carried."""
    from pfnn_demo.sim import policy

    shipped = load_network()

    class MeanPoseNetwork:
        """Always the mean output: a network with no phase, as a mode-adaptive one has none."""
        kind = "mean-pose"
        weights, input_size, output_size = shipped.weights, shipped.input_size, shipped.output_size

        def predict_batch(self, x, used=None):
            return np.tile(self.weights.Ymean.astype(np.float32), (len(x), 1))

    class StatelessPolicy:
        kind, state_keys, extra_inputs = "mean-pose", (), 0

        def __init__(self, network):
            self.network = network
            self.evaluated = 0

        def initial_state(self, count):
            return {}

        def start(self, state, index, pose):
            pass

        def evaluate(self, x, state):
            self.evaluated += 1
            return self.network.predict_batch(x), {}

        def advance(self, state, y, out, stand_amount):
            pass

        def manifold_now(self, state):
            return None

        def describe(self, used, character):
            return "no phase"

        def snapshot(self, state, index):
            return {}

        def restore(self, state, snapshot, index):
            pass

    policy.POLICIES["mean-pose"] = StatelessPolicy
    try:
        crowd = Crowd(MeanPoseNetwork(), load_scene("plaza"), 3, start_pose="mean")
        for _ in range(20):
            crowd.step(Controls.still(3))
        assert crowd.policy.evaluated == 20 and crowd.phase is None and crowd.phase_used is None
        assert np.all(np.isfinite(crowd.global_transforms))
        state = crowd.state()
        assert "phase" not in state
        crowd.restore(state)
        with pytest.raises(ValueError, match="no controller policy"):
            policy.policy_for(type("Other", (), {"kind": "other"})())
    finally:
        del policy.POLICIES["mean-pose"]
