"""The DeepPhase controller: its file and runtime, how it moves through the phase manifold, its
place among controller kinds (the crowd, snapshots, recordings, the window), its training data
and training, and the shipped network."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.errors import WeightsError
from pfnn_demo.library import load_network
from pfnn_demo.sim import deepphase
from pfnn_demo.sim.deepphase import (AMPLITUDE, FREQUENCY, MANIFOLD_FRAMES, NOW, PHASE, SAMPLE_ROWS, DeepPhaseNetwork,
                                     advance_manifold, gate_inputs, phase_input_size, phase_output_size)
from pfnn_demo.sim.features import FUTURE_SAMPLES, INPUT, INPUT_SIZE, OUTPUT_SIZE, SAMPLES
from pfnn_demo.sim.mann import MannWeights, predict_naive, save_mann

from conftest import REPO, make_random_weights, step_expert_blends

SHIPPED = REPO / "network" / "deepphase.npz"
CHANNELS = 2


def _played_with_manifold(controller, script, frames: int) -> tuple[dict, np.ndarray]:
    """Play `script` headless: its recording's arrays and the player's manifold (T, M, 3) per frame."""
    from pfnn_demo.sim.headless import simulate
    from pfnn_demo.sim.recording import Recorder

    class ManifoldRecorder(Recorder):
        manifold: list

        def capture(self, controller, controls):
            super().capture(controller, controls)
            self.manifold.append(controller.phase_manifold.copy())

    recorder = ManifoldRecorder(controller)
    recorder.manifold = []
    _, failure = simulate(controller, script, frames, recorder)
    assert failure is None
    return recorder.arrays(), np.array(recorder.manifold)


def make_deepphase_weights(seed: int = 0, channels: int = CHANNELS, experts: int = 3, hidden=(40, 32),
                           gate_hidden: int = 12) -> MannWeights:
    """A small random DeepPhase network with the runtime's layout."""
    rng = np.random.default_rng(seed)
    sizes = (INPUT_SIZE + phase_input_size(channels), *hidden, OUTPUT_SIZE + phase_output_size(channels))
    gate = gate_inputs(channels)
    arrays = {}
    for layer, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        arrays[f"W{layer}"] = rng.normal(0, 1 / np.sqrt(n_in), (experts, n_out, n_in)).astype(np.float32)
        arrays[f"b{layer}"] = rng.normal(0, 0.1, (experts, n_out)).astype(np.float32)
    for layer, (n_in, n_out) in enumerate(zip((len(gate), gate_hidden, gate_hidden), (gate_hidden, gate_hidden, experts))):
        arrays[f"G{layer}"] = rng.normal(0, 1 / np.sqrt(n_in), (n_out, n_in)).astype(np.float32)
        arrays[f"g{layer}"] = rng.normal(0, 0.1, n_out).astype(np.float32)
    base = make_random_weights(seed)
    extra_in, extra_out = phase_input_size(channels), phase_output_size(channels)
    per_sample = FUTURE_SAMPLES * channels
    # Predicted amplitudes about 1 and frequencies about 1.5 Hz, vectors about 0.
    y_extra = np.concatenate([np.zeros(2 * per_sample), np.ones(per_sample), np.full(per_sample, 1.5)])
    return MannWeights(**arrays, gate_inputs=gate,
                       Xmean=np.concatenate([base.Xmean, np.zeros(extra_in)]).astype(np.float32),
                       Xstd=np.concatenate([base.Xstd, np.full(extra_in, 0.7)]).astype(np.float32),
                       Ymean=np.concatenate([base.Ymean, y_extra]).astype(np.float32),
                       Ystd=np.concatenate([base.Ystd, np.ones(extra_out)]).astype(np.float32) * 0.01,
                       provenance="random DeepPhase")


@pytest.fixture
def deepphase_path(tmp_path):
    path = tmp_path / "deepphase.npz"
    save_mann(make_deepphase_weights(), path, experts_dtype=np.float32, kind="deepphase")
    return path


def test_the_runtime_is_a_mixture_of_experts_gated_by_the_phase_manifold(deepphase_path):
    weights = make_deepphase_weights()
    network = load_network(deepphase_path)
    assert isinstance(network, DeepPhaseNetwork) and network.channels == CHANNELS and network.modes == ()
    assert network.input_size == 342 + 24 * CHANNELS and network.output_size == 311 + 24 * CHANNELS
    rng = np.random.default_rng(1)
    x = weights.Xmean + rng.normal(size=(4, network.input_size)).astype(np.float32) * weights.Xstd
    expected = np.stack([predict_naive(weights, row) for row in x])
    scale = np.abs(expected - weights.Ymean).max()
    assert np.abs(network.predict_batch(x) - expected).max() < 1e-4 * scale
    # The gate reads the manifold (and the MANN's few inputs): the others, such as the terrain,
    # leave the experts' blend as it is; the manifold moves it.
    assert set(deepphase.manifold_inputs(CHANNELS)) <= set(network.weights.gate_inputs)
    network.predict_batch(x)
    blend = network.gate_weights.copy()
    changed = x.copy()
    terrain = np.r_[INPUT["height_side_pos"], INPUT["height_centre"], INPUT["height_side_neg"]]
    changed[:, terrain] += 50.0
    network.predict_batch(changed)
    assert np.allclose(network.gate_weights, blend, atol=1e-6)
    changed[:, INPUT_SIZE:] += 1.0
    network.predict_batch(changed)
    assert np.abs(network.gate_weights - blend).max() > 1e-3


def test_each_characters_expert_blend_eases_towards_the_gates_on_the_manifold(deepphase_path):
    # The gate reads the manifold beside the 342; its blend eases as the MANN's does.
    def with_manifold(x, state):
        return np.concatenate([x, deepphase.manifold_input(state["manifold"])], axis=1)

    policy, _, blends = step_expert_blends(load_network(deepphase_path), with_manifold, seed=3)
    assert 0 < policy.gate_ease < 1 and np.abs(np.diff(blends, axis=0)).max() > 1e-4


def test_damaged_or_mismatched_files_are_one_line_errors(tmp_path, deepphase_path):
    with np.load(deepphase_path) as data:
        arrays = {key: data[key] for key in data.files}
    assert str(arrays["kind"]) == "deepphase"
    wrong_outputs = dict(W2=arrays["W2"][:, :-3], b2=arrays["b2"][:, :-3], Ymean=arrays["Ymean"][:-3],
                         Ystd=arrays["Ystd"][:-3])
    for change, message in ((wrong_outputs, "outputs"),
                            (dict(gate_inputs=np.arange(10, 10 + len(arrays["gate_inputs"]))), "phase manifold"),
                            (dict(W0=np.full_like(arrays["W0"], np.inf)), "NaN or infinite")):
        broken = tmp_path / "broken.npz"
        np.savez(broken, **{**arrays, **change})
        with pytest.raises(WeightsError, match=message) as error:
            load_network(broken)
        assert "\n" not in str(error.value)
    with pytest.raises(WeightsError, match="no modes"):
        load_network(deepphase_path, "cubic")


def _unit(phase):
    return np.stack([np.sin(2 * np.pi * phase), np.cos(2 * np.pi * phase)], axis=-1)


def test_the_phase_turns_by_the_predicted_frequency_and_meets_the_prediction_halfway():
    rng = np.random.default_rng(4)
    count, channels = 3, 4
    manifold = np.zeros((count, MANIFOLD_FRAMES, channels, 3), np.float32)
    manifold[..., PHASE] = rng.uniform(0, 1, manifold.shape[:-1])
    manifold[..., AMPLITUDE] = 1.0
    before = manifold.copy()
    frequency = rng.uniform(0.5, 3.0, (count, FUTURE_SAMPLES, channels)).astype(np.float32)
    turned = before[:, NOW:, :, PHASE] + frequency / 60.0
    # A prediction where the turned phase already is: the phase is exactly turned.
    prediction = {"vectors": 0.4 * _unit(turned), "amplitude": np.full_like(frequency, 0.4), "frequency": frequency}
    advance_manifold(manifold, prediction)
    assert np.allclose(np.mod(manifold[:, NOW:, :, PHASE] - turned + 0.5, 1.0) - 0.5, 0.0, atol=1e-5)
    assert np.allclose(manifold[:, NOW:, :, AMPLITUDE], 0.4) and np.allclose(manifold[:, NOW:, :, FREQUENCY], frequency)
    # The past moves back a frame: what was now is a frame ago.
    assert np.array_equal(manifold[:, NOW - 1], before[:, NOW]) and np.array_equal(manifold[:, 0], before[:, 1])
    # A prediction 0.1 cycle ahead of the turned phase: the update goes halfway, 0.05.
    manifold = before.copy()
    prediction["vectors"] = 2.0 * _unit(turned + 0.1)
    advance_manifold(manifold, prediction)
    offset = np.mod(manifold[:, NOW:, :, PHASE] - turned + 0.5, 1.0) - 0.5
    assert np.allclose(offset, 0.05, atol=1e-4)
    # Negative predicted amplitudes and frequencies are none; a zero vector keeps the turned phase.
    manifold = before.copy()
    prediction = {"vectors": np.zeros(frequency.shape + (2,), np.float32), "amplitude": -np.ones_like(frequency),
                  "frequency": -frequency}
    advance_manifold(manifold, prediction)
    assert np.all(manifold[:, NOW:, :, AMPLITUDE] == 0) and np.all(manifold[:, NOW:, :, FREQUENCY] == 0)
    assert np.allclose(np.mod(manifold[:, NOW:, :, PHASE] - before[:, NOW:, :, PHASE] + 0.5, 1.0) - 0.5, 0, atol=1e-5)


def test_a_standing_character_s_amplitudes_settle_as_the_pfnn_s_phase_slows():
    count, channels = 3, 2
    manifold = np.zeros((count, MANIFOLD_FRAMES, channels, 3), np.float32)
    shape = (count, FUTURE_SAMPLES, channels)
    prediction = {"vectors": np.zeros(shape + (2,), np.float32), "amplitude": np.full(shape, 0.8, np.float32),
                  "frequency": np.full(shape, 1.5, np.float32)}
    # Moving, half-stood, stood: the amplitudes are scaled by 0.1 + 0.9 x the stand amount.
    advance_manifold(manifold, prediction, np.array([1.0, 0.5, 0.0]))
    assert np.allclose(manifold[:, NOW:, :, AMPLITUDE], np.array([0.8, 0.44, 0.08])[:, None, None])
    assert np.allclose(manifold[:, NOW:, :, FREQUENCY], 1.5)


def test_the_crowd_feeds_the_manifold_along_the_trajectory_and_snapshots_repeat(deepphase_path):
    from pfnn_demo.sim.controller import Controller
    from pfnn_demo.sim.headless import simulate
    from pfnn_demo.sim.input_script import InputScript
    from pfnn_demo.sim.scene import load_scene

    network = load_network(deepphase_path)
    scene = load_scene("plaza")
    controller = Controller(network, scene, characters=3)
    crowd = controller.crowd
    _, failure = simulate(controller, InputScript.load("walk_circle"), 40)
    assert failure is None and np.all(np.isfinite(crowd.joint_positions_final))
    manifold = crowd.policy_state["manifold"]
    assert manifold.shape == (3, MANIFOLD_FRAMES, CHANNELS, 3)
    assert np.all(manifold[:, NOW, :, AMPLITUDE] > 0) and controller.phase_manifold.shape == (CHANNELS, 3)
    # What the network reads beside the 342: the manifold at the 12 trajectory samples.
    samples = manifold[:, SAMPLE_ROWS]
    state = crowd.state()
    x = crowd._x.copy()
    inputs = np.concatenate([x, deepphase.manifold_input(manifold)], axis=1)
    assert inputs.shape[1] == network.input_size and len(SAMPLE_ROWS) == SAMPLES
    vectors = inputs[:, INPUT_SIZE:].reshape(3, SAMPLES, CHANNELS, 2)
    assert np.allclose(np.hypot(vectors[..., 0], vectors[..., 1]), samples[..., AMPLITUDE], atol=1e-5)
    # A snapshot carries the manifold: the steps after a restore repeat exactly.
    after = Controller(network, scene, characters=3)
    after.crowd.restore(state)
    script = InputScript.load("walk_circle")
    simulate(controller, script, 20)
    simulate(after, script, 20)
    assert np.array_equal(after.crowd.joint_positions, controller.crowd.joint_positions)
    assert np.array_equal(after.crowd.policy_state["manifold"], controller.crowd.policy_state["manifold"])
    # Characters start from the pose and manifold the network settles into standing.
    fresh = Controller(network, scene, characters=2).crowd
    assert np.all(fresh.policy_state["manifold"][:, NOW, :, AMPLITUDE] > 0)


def test_recordings_replay_and_other_kinds_recordings_drive_it(tmp_path, deepphase_path):
    from pfnn_demo.tools.cli import main

    recording = tmp_path / "played.npz"
    assert main(["run", "--headless", "--script", "walk_circle", "--frames", "40", "--network", str(deepphase_path),
                 "--record", str(recording)]) == 0
    with np.load(recording) as data:
        assert str(data["network_kind"]) == "deepphase"
        drawn = data["joint_positions"]
    again = tmp_path / "again.npz"
    assert main(["run", "--headless", "--replay-input", str(recording), "--network", str(deepphase_path),
                 "--record", str(again)]) == 0
    with np.load(again) as data:
        assert np.array_equal(data["joint_positions"], drawn)
    pfnn_recording = tmp_path / "pfnn.npz"
    assert main(["run", "--headless", "--script", "walk_circle", "--frames", "20", "--record", str(pfnn_recording)]) == 0
    assert main(["run", "--headless", "--replay-input", str(pfnn_recording), "--network", str(deepphase_path)]) == 0


def test_training_rows_carry_the_manifold_on_past_the_clip_ends():
    from pfnn_demo.tools.phase_manifold import PhaseManifold
    from pfnn_demo.tools.train.database import SAMPLE_OFFSETS
    from pfnn_demo.tools.train.manifold_windows import manifold_at, manifold_windows

    frames, channels = 200, 2
    t = np.arange(frames) / 60.0
    frequency = np.array([1.0, 2.5])
    manifold = PhaseManifold(np.mod(t[:, None] * frequency, 1.0), np.tile(frequency, (frames, 1)),
                             np.tile([0.5, 2.0], (frames, 1)), np.zeros((frames, channels)))
    phase, amplitude, freq = manifold_at(manifold, np.array([-30, 0, 100, 199, 259]))
    expected = np.mod(np.array([-30, 0, 100, 199, 259])[:, None] / 60.0 * frequency, 1.0)
    assert np.allclose(np.mod(phase - expected + 0.5, 1.0) - 0.5, 0, atol=1e-9)
    assert np.allclose(amplitude, [0.5, 2.0]) and np.allclose(freq, frequency)
    extra_x, extra_y = manifold_windows(manifold)
    assert extra_x.shape == (frames - 2, phase_input_size(channels))
    assert extra_y.shape == (frames - 2, phase_output_size(channels))
    # Row 0 is frame 1: its samples are frames 1 - 60 ... 1 + 50, read at those times.
    row = extra_x[0].reshape(SAMPLES, channels, 2)
    sample_phase = np.mod((1 + SAMPLE_OFFSETS)[:, None] / 60.0 * frequency, 1.0)
    assert np.allclose(row[..., 0], [0.5, 2.0] * np.sin(2 * np.pi * sample_phase), atol=1e-5)
    # Its outputs: the next frame's manifold at its 6 future samples, then amplitudes and frequencies.
    predicted = deepphase.read_phase_output(np.concatenate([np.zeros((1, OUTPUT_SIZE)), extra_y[:1]], axis=1), channels)
    future_phase = np.mod((2 + 10 * np.arange(FUTURE_SAMPLES))[:, None] / 60.0 * frequency, 1.0)
    assert np.allclose(predicted["vectors"][0, ..., 1], [0.5, 2.0] * np.cos(2 * np.pi * future_phase), atol=1e-5)
    assert np.allclose(predicted["frequency"][0], frequency) and np.allclose(predicted["amplitude"][0], [0.5, 2.0])


def test_training_a_deepphase_controller_is_reproducible_and_its_file_plays(tmp_path):
    pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.sim.controller import Controller
    from pfnn_demo.motion.deepmimic import load_deepmimic
    from pfnn_demo.sim.headless import simulate
    from pfnn_demo.sim.input_script import InputScript
    from pfnn_demo.sim.scene import load_scene
    from pfnn_demo.tools.phase_manifold import PhaseEncoder
    from pfnn_demo.tools.train.database import clip_from_motion, clip_windows, normalisation
    from pfnn_demo.tools.train.manifold_windows import clip_manifold, manifold_windows
    from pfnn_demo.tools.train.trainer import export, recipe, train

    encoder = PhaseEncoder.load(REPO / "network" / "phases.npz")
    walk = clip_from_motion(load_deepmimic(REPO / "data" / "motions" / "humanoid3d_walk.txt", 3.0), "walk")
    X, Y, P = clip_windows(walk)
    extra_x, extra_y = manifold_windows(clip_manifold(encoder, walk.positions))
    X, Y = np.concatenate([X, extra_x], axis=1), np.concatenate([Y, extra_y], axis=1)
    norm = normalisation(X, Y, deepphase.output_groups(encoder.channels))
    assert np.all(np.isfinite(norm[1])) and np.all(norm[1] > 0) and np.all(norm[3] > 0)
    config = recipe("deepphase", hidden=16, epochs=3, batch_size=16, experts=3, seed=5)
    history = None
    for name in ("first.npz", "second.npz"):
        model, history = train(X, Y, P, norm, config, progress=False, log=lambda text: None)
        export(model, norm, tmp_path / name, "twice")
    assert history[-1]["train_loss"] < history[0]["train_loss"]
    first, second = np.load(tmp_path / "first.npz"), np.load(tmp_path / "second.npz")
    assert str(first["kind"]) == "deepphase"
    for key in first.files:
        assert np.array_equal(first[key], second[key]), key
    network = load_network(tmp_path / "first.npz")
    assert network.channels == encoder.channels
    _, failure = simulate(Controller(network, load_scene("plaza")), InputScript.load("walk_circle"), 30)
    assert failure is None

    # The tempo and amplitude noise on the manifold and rollouts that feed it back: reproducible
    # too, and it plays.
    config = recipe("deepphase", hidden=16, epochs=2, batch_size=16, experts=3, seed=5, manifold_tempo=0.2,
                    manifold_amplitude=0.3, rollout_frames=5, rollout_updates=3, rollout_sequences=4)
    follows = np.arange(len(X)) > 0
    for name in ("tempo.npz", "tempo_again.npz"):
        model, history = train(X, Y, P, norm, config, progress=False, log=lambda text: None, follows=follows)
        export(model, norm, tmp_path / name, "tempo")
    assert np.isfinite(history[-1]["rollout_loss"])
    first, second = np.load(tmp_path / "tempo.npz"), np.load(tmp_path / "tempo_again.npz")
    for key in first.files:
        assert np.array_equal(first[key], second[key]), key
    assert not np.array_equal(first["W0"], np.load(tmp_path / "first.npz")["W0"])
    _, failure = simulate(Controller(load_network(tmp_path / "tempo.npz"), load_scene("plaza")),
                          InputScript.load("walk_circle"), 30)
    assert failure is None


def test_training_without_a_phases_file_is_a_one_line_error(tmp_path, capsys):
    pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.tools.cli import main

    assert main(["train", "--model", "deepphase", "--phases", str(tmp_path / "none.npz"), "--data", str(REPO / "data"),
                 "--out", str(tmp_path / "out.npz")]) == 2
    error = capsys.readouterr().err.strip()
    assert "no such phases file" in error and len(error.splitlines()) == 1


@pytest.mark.skipif(not SHIPPED.is_file(), reason="network/deepphase.npz is not in this checkout")
def test_the_shipped_controller_fits_the_size_limit_and_walks_through_its_manifold():
    from pfnn_demo.sim.controller import Controller
    from pfnn_demo.sim.input_script import InputScript
    from pfnn_demo.sim.scene import load_scene
    from pfnn_demo.tools.phase_manifold import PhaseEncoder

    assert SHIPPED.stat().st_size <= 12 * 1024 * 1024
    network = load_network(SHIPPED)
    assert network.kind == "deepphase" and network.experts == 8
    assert "DeepPhase" in network.weights.provenance and "mocap.cs.cmu.edu" in network.weights.provenance
    encoder = PhaseEncoder.load(REPO / "network" / "phases.npz")
    assert network.channels == encoder.channels
    controller = Controller(network, load_scene("plaza"))
    recording, manifold = _played_with_manifold(controller, InputScript.load("walk_circle"), 900)
    walking, standing = manifold[300:], manifold[:30]
    # Walking, the strongest channel turns once a stride: as often as the left heel lands.
    strongest = int(np.argmax(walking[:, :, AMPLITUDE].mean(axis=0)))
    turns = np.mod(np.diff(walking[:, strongest, PHASE]), 1.0)
    cycles_per_second = np.mean(np.where(turns > 0.5, turns - 1.0, turns)) * 60
    heel = recording["contacts"][300:, 0] > 0.5
    strides_per_second = np.count_nonzero(heel[1:] & ~heel[:-1]) / (len(heel) / 60)
    assert strides_per_second > 0.3
    assert abs(cycles_per_second / strides_per_second - 1) < 0.15, (cycles_per_second, strides_per_second)
    # Every channel is stronger walking than standing.
    assert np.all(walking[:, :, AMPLITUDE].mean(axis=0) > standing[:, :, AMPLITUDE].mean(axis=0))


@pytest.mark.skipif(not SHIPPED.is_file(), reason="network/deepphase.npz is not in this checkout")
def test_the_shipped_controller_comes_to_rest_after_a_jog():
    from pfnn_demo.sim.controller import Controller
    from pfnn_demo.sim.input_script import InputScript
    from pfnn_demo.sim.scene import load_scene
    from pfnn_demo.tools.evaluation import STANDING_AFTER, standing_foot_speed

    script, scene = InputScript.load("jog_and_stop"), load_scene("plaza")
    controller = Controller(load_network(SHIPPED), scene, starts=script.starts_in(scene))
    recording, manifold = _played_with_manifold(controller, script, script.frames)
    released = np.flatnonzero(np.linalg.norm(recording["stick"], axis=1) > 0.2)[-1] + 1
    settled = released + int(STANDING_AFTER * 60)
    assert script.frames - settled >= 30
    # A second after the stick is released the manifold has wound down and the feet are planted
    # (the evaluation's standing-feet bar, 1 unit/s).
    amplitudes = manifold[..., AMPLITUDE]
    assert np.all(amplitudes[settled:].mean(axis=0) < 0.25 * amplitudes[released - 60:released].mean(axis=0))
    assert standing_foot_speed(recording) <= 1.0, standing_foot_speed(recording)


def test_the_window_offers_it_as_a_controller_and_the_hud_draws_its_phase_channels(gl, deepphase_path):
    import pygame

    from pfnn_demo.app.demo import Demo, controller_files
    from pfnn_demo.app.render.hud import Hud
    from pfnn_demo.resources import default_network_path

    demo = Demo(gl, load_network(default_network_path()), "plaza", network_path=default_network_path())
    files, _ = controller_files(demo.controller.network, default_network_path())
    assert ("DeepPhase" in files) == SHIPPED.is_file()
    demo.network_files["test DeepPhase"] = deepphase_path
    demo.set_network("test DeepPhase")
    for _ in range(10):
        demo.update(1 / 60)
    assert demo.controller.network.kind == "deepphase"
    labels = [entry.label() for entry in demo.menu.page.entries] if demo.menu.open else []
    assert not any(text.startswith("Network mode") for text in labels)
    # One circle per channel, as large as the channel's amplitude, its hand at the phase.
    hud, manifold = Hud(), demo.controller.crowd.policy_state["manifold"]
    region = (slice(205, 295), slice(8, 88))

    def drawn(amplitude, phase):
        manifold[0, NOW, :, AMPLITUDE], manifold[0, NOW, :, PHASE] = amplitude, phase
        return pygame.surfarray.array3d(hud.draw(demo.last_input, demo.controller, 60.0, "Plaza"))[region].copy()

    typical = demo.controller.network.typical_amplitudes()
    small, large, turned = drawn(0.5 * typical, 0.0), drawn(2.0 * typical, 0.0), drawn(2.0 * typical, 0.25)
    red = lambda image: int(np.count_nonzero((image[..., 0] > 150) & (image[..., 1] < 100)))  # noqa: E731
    assert red(large) > 2 * red(small) > 0
    assert np.abs(turned.astype(int) - large).sum() > 500        # the hands moved
