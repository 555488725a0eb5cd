"""Shared fixtures. Reference data is read from ../shared (never copied); tests needing it skip without it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from pfnn_demo.weights import NetworkWeights

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
