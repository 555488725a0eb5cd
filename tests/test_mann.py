"""The mode-adaptive network: its file, its runtime against the paper's formula, its place among
controller kinds (loading, the crowd, recordings, the window's "Controller" entry), and training."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.errors import WeightsError
from pfnn_demo.library import load_network
from pfnn_demo.resources import default_network_path
from pfnn_demo.sim.mann import GATE_INPUTS, MannWeights, ModeAdaptiveNetwork, predict_naive, save_mann
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
from pfnn_demo.sim.weights import save_npz

from conftest import REPO, make_random_weights, step_expert_blends

SHIPPED_MANN = REPO / "network" / "mann.npz"


def make_mann_weights(seed: int = 0, experts: int = 4, sizes=(342, 48, 40, 311), gate_hidden: int = 16,
                      gate_phase: bool = False) -> MannWeights:
    """A small random MANN with the runtime's input and output layout (its gate reading the
    phase too with `gate_phase`)."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for layer, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        arrays[f"W{layer}"] = rng.normal(0, 1 / np.sqrt(n_in), (experts, n_out, n_in)).astype(np.float32)
        arrays[f"b{layer}"] = rng.normal(0, 0.1, (experts, n_out)).astype(np.float32)
    for layer, (n_in, n_out) in enumerate(zip((len(GATE_INPUTS) + 2 * gate_phase, gate_hidden, gate_hidden),
                                              (gate_hidden, gate_hidden, experts))):
        arrays[f"G{layer}"] = rng.normal(0, 1 / np.sqrt(n_in), (n_out, n_in)).astype(np.float32)
        arrays[f"g{layer}"] = rng.normal(0, 0.1, n_out).astype(np.float32)
    base = make_random_weights(seed)
    # Small output deviations keep a random network's poses near its mean in play.
    return MannWeights(**arrays, gate_inputs=GATE_INPUTS.copy(), Xmean=base.Xmean, Xstd=base.Xstd,
                       Ymean=base.Ymean, Ystd=base.Ystd * 0.01, provenance="random MANN", gate_phase=gate_phase)


@pytest.fixture
def mann_path(tmp_path):
    path = tmp_path / "mann.npz"
    save_mann(make_mann_weights(), path, experts_dtype=np.float32)
    return path


def test_the_runtime_is_the_papers_gated_blend_of_experts(mann_path):
    weights = make_mann_weights()
    network = load_network(mann_path)
    assert isinstance(network, ModeAdaptiveNetwork) and network.experts == 4 and network.modes == ()
    rng = np.random.default_rng(1)
    x = weights.Xmean + rng.normal(size=(5, 342)).astype(np.float32) * weights.Xstd
    batch = network.predict_batch(x)
    gate = network.gate_weights
    expected = np.stack([predict_naive(weights, row) for row in x])
    scale = np.abs(expected - weights.Ymean).max()
    assert np.abs(batch - expected).max() < 1e-4 * scale
    assert np.abs(network.predict(x[2]) - expected[2]).max() < 1e-4 * scale
    # The gate is a softmax over the experts, and different inputs blend them differently.
    assert gate.shape == (5, 4) and np.allclose(gate.sum(axis=1), 1.0, atol=1e-6) and np.all(gate > 0)
    assert np.abs(gate[0] - gate[1]).max() > 1e-3


def test_files_say_their_kind_and_every_kind_loads_through_one_function(tmp_path, mann_path):
    pfnn = tmp_path / "pfnn.npz"
    save_npz(make_random_weights(), pfnn)
    assert "kind" not in np.load(pfnn).files        # a PFNN's file is as it always was
    assert isinstance(load_network(pfnn), PhaseFunctionedNetwork)
    assert str(np.load(mann_path)["kind"]) == "mann"
    # float16 experts halve the file; the runtime computes in float32 either way.
    half = tmp_path / "half.npz"
    save_mann(make_mann_weights(), half)
    assert np.load(half)["W1"].dtype == np.float16
    assert load_network(half).predict_batch(np.zeros((1, 342), np.float32)).dtype == np.float32
    with pytest.raises(WeightsError, match="no modes"):
        load_network(mann_path, "linear")
    with np.load(mann_path) as data:
        arrays = {key: data[key] for key in data.files}
    for change, message in ((dict(kind=np.str_("deepflow")), "kind 'deepflow'"),
                            (dict(G2=arrays["G2"][:3]), "gate"),
                            (dict(W1=np.full_like(arrays["W1"], np.nan)), "NaN"),
                            (dict(gate_inputs=np.array([400])), "gate_inputs")):
        broken = tmp_path / "broken.npz"
        np.savez(broken, **{**arrays, **change})
        with pytest.raises(WeightsError, match=message):
            load_network(broken)


def test_the_crowd_steps_a_mann_and_the_player_carries_on_across_a_switch(mann_path):
    from pfnn_demo.sim.controller import Controller
    from pfnn_demo.sim.input_script import InputScript
    from pfnn_demo.sim.headless import simulate
    from pfnn_demo.sim.scene import load_scene

    scene = load_scene("plaza")
    controller = Controller(load_network(mann_path), scene, characters=3)
    _, failure = simulate(controller, InputScript.load("walk_circle"), 30)
    assert failure is None and np.all(np.isfinite(controller.joint_positions_final))
    weights = controller.crowd.expert_weights
    assert weights.shape == (3, 4) and np.allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    assert controller.expert_weights.shape == (4,)
    # The same state carries over to a PFNN: every character is where it was.
    pfnn = Controller(load_network(default_network_path()), scene, characters=3)
    pfnn.crowd.restore(controller.crowd.state())
    assert np.array_equal(pfnn.crowd.joint_positions, controller.crowd.joint_positions)
    assert np.array_equal(pfnn.crowd.phase, controller.crowd.phase)
    assert pfnn.expert_weights is None


def test_each_characters_expert_blend_eases_towards_the_gates(mann_path):
    # The first step takes the gate's blend; later ones move gate_ease of the way to it.
    policy, state, blends = step_expert_blends(load_network(mann_path), lambda x, state: x)
    assert 0 < policy.gate_ease < 1 and np.abs(np.diff(blends, axis=0)).max() > 1e-4
    # Snapshots carry the blend; one without it (another kind's) takes the gate's afresh.
    policy.restore(state, {"phase": np.zeros(1)}, [1])
    assert np.isnan(state["blend"][1]).all() and not np.isnan(state["blend"][0]).any()


def test_the_blends_ease_is_the_network_files_and_a_file_without_one_eases_half_way(tmp_path, mann_path):
    import dataclasses

    from pfnn_demo.sim.mann import DEFAULT_GATE_EASE

    assert "gate_ease" not in np.load(mann_path).files      # a file made before it stays as it was
    assert load_network(mann_path).gate_ease == DEFAULT_GATE_EASE == 0.5
    slower = tmp_path / "slower.npz"
    save_mann(dataclasses.replace(make_mann_weights(), gate_ease=0.2), slower)
    policy, _, blends = step_expert_blends(load_network(slower), lambda x, state: x)
    assert policy.gate_ease == 0.2
    # Eased less, the blend moves less from step to step on the same inputs.
    _, _, half_way = step_expert_blends(load_network(mann_path), lambda x, state: x)
    assert np.abs(np.diff(blends, axis=0)).max() < np.abs(np.diff(half_way, axis=0)).max()
    with np.load(slower) as data:
        arrays = {key: data[key] for key in data.files}
    for value, message in ((np.float64(0.0), "gate_ease is 0"), (np.float64(1.5), "gate_ease is 1.5"),
                           (np.array([0.2, 0.3]), "gate_ease must be one number")):
        broken = tmp_path / "broken.npz"
        np.savez(broken, **{**arrays, "gate_ease": value})
        with pytest.raises(WeightsError, match=message):
            load_network(broken)


def test_recordings_of_a_mann_replay_and_a_pfnn_recording_drives_a_mann(tmp_path, mann_path):
    from pfnn_demo.tools.cli import main

    recording = tmp_path / "played.npz"
    assert main(["run", "--headless", "--script", "walk_circle", "--frames", "40", "--network", str(mann_path),
                 "--record", str(recording)]) == 0
    with np.load(recording) as data:
        assert str(data["network_kind"]) == "mann" and np.all(data["frame_mode"] == -1)
        assert str(data["mode"]) == ""
        drawn = data["joint_positions"]
    again = tmp_path / "again.npz"
    assert main(["run", "--headless", "--replay-input", str(recording), "--network", str(mann_path),
                 "--record", str(again)]) == 0
    with np.load(again) as data:
        assert np.array_equal(data["joint_positions"], drawn)
    # A PFNN's recorded inputs drive a MANN (the recorded network mode does not apply to it).
    pfnn_recording = tmp_path / "pfnn.npz"
    assert main(["run", "--headless", "--script", "walk_circle", "--frames", "20", "--mode", "linear",
                 "--record", str(pfnn_recording)]) == 0
    assert main(["run", "--headless", "--replay-input", str(pfnn_recording), "--network", str(mann_path)]) == 0


def test_a_mode_for_a_mann_is_a_one_line_error(mann_path, capsys):
    from pfnn_demo.tools.cli import main

    assert main(["run", "--headless", "--script", "walk_circle", "--frames", "5", "--network", str(mann_path),
                 "--mode", "constant"]) == 2
    error = capsys.readouterr().err.strip()
    assert "no modes" in error and len(error.splitlines()) == 1


def test_the_window_switches_controllers_live_and_shows_modes_only_where_they_apply(gl, mann_path):
    import pygame

    from pfnn_demo.app.demo import Demo
    from pfnn_demo.app.render.hud import Hud
    from pfnn_demo.app.render.offscreen import OffscreenTarget

    demo = Demo(gl, load_network(default_network_path()), "plaza", characters=3, network_path=default_network_path())
    demo.network_files["test MANN"] = mann_path
    for _ in range(20):
        demo.update(1 / 60)
    demo.on_key(pygame.K_ESCAPE, True)
    labels = [entry.label() for entry in demo.menu.page.entries]
    assert any(text.startswith("Controller") for text in labels)
    assert any(text.startswith("Network mode") for text in labels)
    before = demo.controller.crowd.joint_positions.copy()
    demo.set_network("test MANN")
    assert demo.controller.network.kind == "mann" and demo.controller.characters == 3
    assert np.array_equal(demo.controller.crowd.joint_positions, before)     # everyone carries on
    labels = [entry.label() for entry in demo.menu.page.entries]
    assert not any(text.startswith("Network mode") for text in labels)
    assert any("test MANN" in text for text in labels)
    for _ in range(10):
        demo.update(1 / 60)
    moved = np.linalg.norm(demo.controller.crowd.joint_positions - before, axis=-1).max()
    assert moved > 0 and np.all(np.isfinite(demo.controller.crowd.joint_positions))
    # The HUD shows the experts' weights where a PFNN's shows its phase circle.
    hud = Hud()
    expert_hud = pygame.surfarray.array3d(hud.draw(demo.last_input, demo.controller, 60.0, "Plaza")).copy()
    demo.set_network("PFNN")
    demo.update(1 / 60)
    phase_hud = pygame.surfarray.array3d(hud.draw(demo.last_input, demo.controller, 60.0, "Plaza"))
    region = (slice(205, 295), slice(15, 85))
    assert np.abs(expert_hud[region].astype(int) - phase_hud[region]).sum() > 1000
    target = OffscreenTarget(gl, (320, 240))
    demo.render(target.framebuffer)
    assert target.read().std() > 5


def test_a_gate_that_reads_the_phase_blends_by_the_phase_each_character_carries(tmp_path, mann_path):
    weights = make_mann_weights(seed=3, gate_phase=True)
    path = tmp_path / "phase_gate.npz"
    save_mann(weights, path, experts_dtype=np.float32)
    network = load_network(path)
    assert network.gate_phase and bool(np.load(path)["gate_phase"])
    # Files from before the option read as gates of their inputs alone.
    assert "gate_phase" not in np.load(mann_path).files and not load_network(mann_path).gate_phase
    rng = np.random.default_rng(4)
    x = np.repeat(weights.Xmean + rng.normal(size=(1, 342)).astype(np.float32) * weights.Xstd, 3, axis=0)
    phases = np.array([0.0, 2.0, 4.0])
    batch = network.predict_batch(x, phases)
    expected = np.stack([predict_naive(weights, row, phase) for row, phase in zip(x, phases)])
    assert np.abs(batch - expected).max() < 1e-4 * np.abs(expected - weights.Ymean).max()
    # The same input at three phases: three blends, as a phase-functioned network's weights move.
    assert np.abs(np.diff(network.gate_weights, axis=0)).max() > 1e-3
    with pytest.raises(ValueError, match="reads the phase"):
        network.predict_batch(x)
    # In play, each character's carried phase reaches the gate, eased as any MANN's blend.
    policy, state, _ = step_expert_blends(network, lambda x, state: x, steps=3)
    first = network.gate_weights.copy()
    state["phase"] = (state["phase"] + np.pi) % (2 * np.pi)
    state["blend"][:] = np.nan
    policy.evaluate(np.repeat(x[:1], len(state["phase"]), axis=0), state)
    assert np.abs(network.gate_weights - first).max() > 1e-3
    # A file whose gate layer does not take the phase beside its inputs is refused.
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    arrays["gate_phase"] = np.bool_(False)
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(WeightsError, match="gate layer G0"):
        load_network(tmp_path / "bad.npz")


def test_training_a_mann_is_reproducible_and_its_file_plays(tmp_path):
    pytest.importorskip("torch", reason="the 'train' extra (PyTorch) is not installed")
    from pfnn_demo.motion.deepmimic import load_deepmimic
    from pfnn_demo.sim.controller import Controller
    from pfnn_demo.sim.headless import simulate
    from pfnn_demo.sim.input_script import InputScript
    from pfnn_demo.sim.scene import load_scene
    from pfnn_demo.tools.train.database import clip_from_motion, clip_windows, normalisation
    from pfnn_demo.tools.train.trainer import export, recipe, train

    walk = clip_from_motion(load_deepmimic(REPO / "data" / "motions" / "humanoid3d_walk.txt", 3.0), "walk")
    X, Y, P = clip_windows(walk)
    norm = normalisation(X, Y)
    config = recipe("mann", hidden=16, epochs=3, batch_size=16, experts=3, seed=5)
    history = None
    for name in ("first.npz", "second.npz"):
        model, history = train(X, Y, P, norm, config, progress=False, log=lambda text: None)
        export(model, norm, tmp_path / name, "twice")
    assert history[-1]["train_loss"] < history[0]["train_loss"]
    first, second = np.load(tmp_path / "first.npz"), np.load(tmp_path / "second.npz")
    assert sorted(first.files) == sorted(second.files) and str(first["kind"]) == "mann"
    for key in first.files:
        assert np.array_equal(first[key], second[key]), key
    network = load_network(tmp_path / "first.npz")
    assert network.experts == 3 and network.weights.W0.shape == (3, 16, 342)
    assert network.gate_ease == 0.5 and "gate_ease" not in first.files
    # A recipe's gate ease goes into the file it writes, and from there into play.
    model, _ = train(X, Y, P, norm, recipe("mann", hidden=16, epochs=1, batch_size=16, experts=3, gate_ease=0.25),
                     progress=False, log=lambda text: None)
    export(model, norm, tmp_path / "eased.npz", "eased")
    assert load_network(tmp_path / "eased.npz").gate_ease == 0.25
    controller = Controller(network, load_scene("plaza"))
    _, failure = simulate(controller, InputScript.load("walk_circle"), 30)
    assert failure is None


@pytest.mark.skipif(not SHIPPED_MANN.is_file(), reason="network/mann.npz is not in this checkout")
def test_the_shipped_mann_fits_the_size_limit_and_says_where_it_came_from():
    assert SHIPPED_MANN.stat().st_size <= 12 * 1024 * 1024
    network = load_network(SHIPPED_MANN)
    assert network.kind == "mann" and network.experts == 8
    assert "mode-adaptive" in network.weights.provenance and "mocap.cs.cmu.edu" in network.weights.provenance
