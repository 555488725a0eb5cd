"""Shared fixtures. Reference data is read from ../shared (never copied); tests needing it skip without it."""

from __future__ import annotations

import os
from pathlib import Path

# No display, no sound card: SDL's dummy drivers (pads and fonts work without a display).
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np
import pytest

from pfnn_demo.sim.weights import NetworkWeights

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PFNN_SHARED", REPO.parent / "shared"))
REFERENCE = SHARED / "reference"


def require_shared(relative: str) -> Path:
    """Path of a file under ../shared, or skip the test saying what is missing."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"reference data {path} is absent (../shared is not beside the checkout)")
    return path


@pytest.fixture(scope="session")
def original_weights() -> NetworkWeights:
    path = require_shared("reference/pfnn_original/control_points.npz")
    with np.load(path) as data:
        return NetworkWeights(**{key: data[key] for key in data.files},
                              provenance="original PFNN (reference, tests only)")


@pytest.fixture(scope="session")
def golden_frame() -> dict:
    path = require_shared("reference/pfnn_original/golden_first_frame.npz")
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def make_random_weights(seed: int = 0, sizes=(342, 64, 48, 311)) -> NetworkWeights:
    """A small random network with the runtime's input/output layout."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for layer, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        arrays[f"W{layer}"] = rng.normal(0, 1 / np.sqrt(n_in), (4, n_out, n_in)).astype(np.float32)
        arrays[f"b{layer}"] = rng.normal(0, 0.1, (4, n_out)).astype(np.float32)
    return NetworkWeights(
        **arrays,
        Xmean=rng.normal(0, 1, sizes[0]).astype(np.float32),
        Xstd=rng.uniform(0.5, 2, sizes[0]).astype(np.float32),
        Ymean=rng.normal(0, 1, sizes[-1]).astype(np.float32),
        Ystd=rng.uniform(0.5, 2, sizes[-1]).astype(np.float32),
        provenance="random test network",
    )


@pytest.fixture
def random_weights() -> NetworkWeights:
    return make_random_weights()


@pytest.fixture(scope="session")
def original_network_path(tmp_path_factory, original_weights):
    """The reference network saved in the project format in a temporary folder (never in the repo)."""
    from pfnn_demo.sim.weights import save_npz

    path = tmp_path_factory.mktemp("reference") / "original.npz"
    save_npz(original_weights, path)
    return path


def step_expert_blends(network, state_inputs, rows: int = 3, steps: int = 4, seed: int = 2):
    """Evaluate a gated kind's policy `steps` times on random inputs, asserting each step's blend is
    the gate's on the first step and `gate_ease` of the way to it after; `state_inputs(x, state)`
    gives the whole input the gate reads. Returns the policy, its state and the blends."""
    from pfnn_demo.sim.features import INPUT_SIZE, read_output
    from pfnn_demo.sim.policy import policy_for

    weights = network.weights
    policy = policy_for(network)
    state = policy.initial_state(rows)
    rng = np.random.default_rng(seed)
    mean, std = weights.Xmean[:INPUT_SIZE], weights.Xstd[:INPUT_SIZE]
    blends = []
    for _ in range(steps):
        x = mean + rng.normal(size=(rows, INPUT_SIZE)).astype(np.float32) * std
        gate = network.gate((state_inputs(x, state) - weights.Xmean) / weights.Xstd,
                            state["phase"] if getattr(network, "gate_phase", False) else None)
        before = state["blend"].copy()
        y, used = policy.evaluate(x, state)
        expected = gate if np.isnan(before).all() else before + policy.gate_ease * (gate - before)
        np.testing.assert_allclose(used["experts_used"], expected, atol=1e-5)
        policy.advance(state, y, read_output(y), np.ones(rows))
        blends.append(state["blend"].copy())
    return policy, state, np.array(blends)


def random_script_dict(seed: int, seconds: float) -> dict:
    """A seeded random input script: sticks anywhere in the disc, random triggers and toggles."""
    rng = np.random.default_rng(seed)
    segments, total = [], 0.0
    while total < seconds:
        duration = float(rng.uniform(0.2, 2.0))
        angle, radius = rng.uniform(0, 2 * np.pi), np.sqrt(rng.uniform(0, 1))
        look_angle = rng.uniform(0, 2 * np.pi)
        segments.append({
            "duration": duration,
            "move": [float(radius * np.cos(angle)), float(radius * np.sin(angle))],
            "look": [float(0.5 * np.cos(look_angle)), float(0.5 * np.sin(look_angle))] if rng.random() < 0.3 else [0, 0],
            "jog": float(rng.choice([0.0, 1.0, rng.uniform()])),
            "strafe": float(rng.choice([0.0, 1.0, rng.uniform()])),
            "crouch": bool(rng.random() < 0.15),
            "responsive": bool(rng.random() < 0.3),
            "ik": bool(rng.random() < 0.8),
        })
        total += duration
    return {"description": f"random input, seed {seed}", "segments": segments}


@pytest.fixture(scope="module")
def gl():
    """An offscreen OpenGL context (EGL; Mesa's llvmpipe without a GPU), with SDL's display up for fonts."""
    import pygame

    from pfnn_demo.app.render.offscreen import create_offscreen_context

    pygame.display.init()
    ctx = create_offscreen_context()
    yield ctx
    ctx.release()
