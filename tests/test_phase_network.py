"""The NumPy PFNN runtime: golden frame, modes against each other, continuity, batching."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.sim.phase_network import MODES, SET_COUNTS, PhaseFunctionedNetwork, predict_naive
from pfnn_demo.sim.weights import catmull_rom_weights

from conftest import require_shared

TWO_PI = 2 * np.pi


@pytest.mark.parametrize("mode", MODES)
def test_golden_first_frame_in_every_mode(original_weights, golden_frame, mode):
    # At phase 0 every mode uses the same weights (the first control point): this checks the
    # layers, the normalisation and the ELU, not the blending; the next test checks the blending.
    network = PhaseFunctionedNetwork(original_weights, mode)
    output = network.predict(golden_frame["X"], 0.0)
    assert output.shape == (311,)
    assert np.max(np.abs(output - golden_frame["Y"])) < 1e-4


def test_constant_mode_reproduces_the_original_between_weight_sets(original_weights):
    """A frame of the original demo (constant mode) whose phase lies between two of the 50 weight
    sets: the constant mode gives its output, the linear and cubic modes something else."""
    with np.load(require_shared("reference/oracle/a_walk.npz")) as data:
        inputs, outputs, phases = data["X"], data["Y"], data["phase_used"]
    between = (phases * 50 / TWO_PI) % 1.0
    frame = int(np.flatnonzero((between > 0.3) & (between < 0.7) & (np.arange(len(phases)) > 120))[0])
    error = {mode: np.max(np.abs(PhaseFunctionedNetwork(original_weights, mode).predict(inputs[frame], phases[frame])
                                 - outputs[frame])) for mode in MODES}
    assert error["constant"] < 1e-4, error
    assert error["linear"] > 0.01 and error["cubic"] > 0.01, error


def test_sizes_are_read_from_the_weights(random_weights):
    network = PhaseFunctionedNetwork(random_weights, "cubic")
    assert (network.input_size, network.output_size) == (342, 311)
    assert random_weights.hidden_sizes == (64, 48)


def test_catmull_rom_weights_interpolate_control_points_and_sum_to_one():
    phases = np.linspace(-3 * np.pi, 5 * np.pi, 1001)
    weights = catmull_rom_weights(phases)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(catmull_rom_weights(TWO_PI * np.arange(4) / 4), np.eye(4), atol=1e-12)


def test_cubic_matches_naive_reference_at_random_phases(random_weights):
    network = PhaseFunctionedNetwork(random_weights, "cubic")
    rng = np.random.default_rng(3)
    for phase in rng.uniform(0, TWO_PI, 20):
        x = rng.normal(random_weights.Xmean, random_weights.Xstd).astype(np.float32)
        expected = predict_naive(random_weights, x, phase)
        np.testing.assert_allclose(network.predict(x, phase), expected, rtol=1e-4, atol=1e-4)


def test_cubic_is_continuous_and_periodic(random_weights):
    network = PhaseFunctionedNetwork(random_weights, "cubic")
    x = np.random.default_rng(4).normal(random_weights.Xmean, random_weights.Xstd).astype(np.float32)
    phases = np.linspace(0, TWO_PI, 2001)
    outputs = np.stack([network.predict(x, p) for p in phases])
    # Continuity: neighbouring phases (step 0.00314 rad) change the output by a small fraction of its range.
    steps = np.max(np.abs(np.diff(outputs, axis=0)), axis=1)
    spread = np.max(outputs, axis=0) - np.min(outputs, axis=0)
    assert np.max(steps) < 0.02 * np.max(spread)
    # Periodicity: 2*pi and 0 agree, and so do p and p + 2*pi, p - 2*pi.
    np.testing.assert_allclose(outputs[-1], outputs[0], atol=1e-5)
    for phase in (0.4, 2.9, 5.5):
        np.testing.assert_allclose(network.predict(x, phase + TWO_PI), network.predict(x, phase), atol=1e-5)
        np.testing.assert_allclose(network.predict(x, phase - TWO_PI), network.predict(x, phase), atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "constant"])
def test_tabled_modes_equal_cubic_at_their_sample_phases(random_weights, mode):
    cubic = PhaseFunctionedNetwork(random_weights, "cubic")
    tabled = PhaseFunctionedNetwork(random_weights, mode)
    x = np.random.default_rng(5).normal(random_weights.Xmean, random_weights.Xstd).astype(np.float32)
    count = SET_COUNTS[mode]
    for i in range(count):
        phase = TWO_PI * i / count
        np.testing.assert_allclose(tabled.predict(x, phase), cubic.predict(x, phase), atol=2e-5)


def test_linear_interpolates_between_samples(random_weights):
    linear = PhaseFunctionedNetwork(random_weights, "linear")
    x = np.random.default_rng(6).normal(random_weights.Xmean, random_weights.Xstd).astype(np.float32)
    # The last interval wraps from set 9 back to set 0.
    for i in (2, 9):
        a, b = TWO_PI * i / 10, TWO_PI * (i + 1) / 10
        low, high = linear.predict(x, a), linear.predict(x, b % TWO_PI)
        # The network is non-linear in its parameters, so compare with an evaluation whose
        # parameters are the blend of the two neighbouring sets.
        middle = linear.predict(x, 0.5 * (a + b))
        assert not np.allclose(middle, low) and not np.allclose(middle, high)
        mu = 0.5
        expected = _blended_sets(random_weights, x, i, (i + 1) % 10, mu)
        np.testing.assert_allclose(middle, expected, rtol=1e-4, atol=1e-4)


def _blended_sets(weights, x, first, second, mu):
    """Evaluate with every layer's parameters = (1-mu)*set[first] + mu*set[second] of 10 samples."""
    blend = (1 - mu) * catmull_rom_weights(TWO_PI * first / 10) + mu * catmull_rom_weights(TWO_PI * second / 10)
    h = (x.astype(np.float64) - weights.Xmean) / weights.Xstd
    for depth, (w, b) in enumerate(weights.layers()):
        h = np.tensordot(blend, w.astype(np.float64), axes=1) @ h + blend @ b
        if depth < 2:
            h = np.where(h > 0, h, np.expm1(np.minimum(h, 0)))
    return h * weights.Ystd + weights.Ymean


def test_constant_mode_holds_the_lower_set(random_weights):
    constant = PhaseFunctionedNetwork(random_weights, "constant")
    x = np.random.default_rng(7).normal(random_weights.Xmean, random_weights.Xstd).astype(np.float32)
    base = constant.predict(x, TWO_PI * 7 / 50)
    np.testing.assert_array_equal(constant.predict(x, TWO_PI * 7.9 / 50), base)
    assert not np.allclose(constant.predict(x, TWO_PI * 8 / 50), base)
    # A phase just below 2*pi reads the last set, not past the end.
    np.testing.assert_allclose(constant.predict(x, np.nextafter(TWO_PI, 0)),
                               constant.predict(x, TWO_PI * 49 / 50), atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_batch_equals_single_calls(random_weights, mode):
    network = PhaseFunctionedNetwork(random_weights, mode)
    rng = np.random.default_rng(8)
    x = rng.normal(random_weights.Xmean, random_weights.Xstd, (37, 342)).astype(np.float32)
    phases = rng.uniform(0, TWO_PI, 37)
    batch = network.predict_batch(x, phases)
    single = np.stack([network.predict(row, p) for row, p in zip(x, phases)])
    np.testing.assert_allclose(batch, single, rtol=1e-4, atol=1e-4)


def test_mode_switch_builds_tables_only_for_the_mode_in_use(random_weights):
    network = PhaseFunctionedNetwork(random_weights, "cubic")
    control = network.nbytes["control_points"]
    assert network.nbytes["mode_tables"] == 0
    network.set_mode("linear")
    assert network.nbytes["mode_tables"] == pytest.approx(control * 10 / 4)
    network.set_mode("constant")
    assert network.nbytes["mode_tables"] == pytest.approx(control * 50 / 4)
    with pytest.raises(ValueError, match="unknown network mode"):
        network.set_mode("quadratic")


def test_predict_returns_a_fresh_array(random_weights):
    network = PhaseFunctionedNetwork(random_weights, "cubic")
    x = np.zeros(342, np.float32)
    first = network.predict(x, 0.1)
    kept = first.copy()
    network.predict(x + 1, 2.0)
    np.testing.assert_array_equal(first, kept)
