"""`pfnn-demo average`: networks of one kind averaged weight for weight, and its one-line errors."""

from __future__ import annotations

import dataclasses

import numpy as np

from pfnn_demo.sim.mann import save_mann
from pfnn_demo.sim.networks import load_network_file, read_network_weights
from pfnn_demo.sim.weights import LAYERS, save_npz
from pfnn_demo.tools.cli import main

from conftest import make_random_weights
from test_mann import make_mann_weights


def _fine_tune_of(weights, seed: int):
    """The same network with other weights and the same normalisation, as `train --init` leaves it."""
    rng = np.random.default_rng(seed)
    return dataclasses.replace(weights, **{name: (getattr(weights, name) + rng.normal(0, 0.05, getattr(weights, name).shape)
                                                  ).astype(np.float32) for name in LAYERS})


def test_three_pfnns_average_by_their_shares_and_the_result_plays(tmp_path, capsys):
    start = make_random_weights(seed=4)
    paths = []
    for seed, weights in enumerate((start, _fine_tune_of(start, 1), _fine_tune_of(start, 2))):
        paths.append(tmp_path / f"net{seed}.npz")
        save_npz(weights, paths[-1])
    out = tmp_path / "soup.npz"
    assert main(["average", str(out), f"{paths[0]}:0.6", f"{paths[1]}:0.3", f"{paths[2]}:0.1"]) == 0
    assert "wrote" in capsys.readouterr().out
    kind, soup = read_network_weights(out)
    parts = [read_network_weights(path)[1] for path in paths]
    assert kind == "pfnn"
    for name in LAYERS:
        expected = 0.6 * getattr(parts[0], name) + 0.3 * getattr(parts[1], name) + 0.1 * getattr(parts[2], name)
        np.testing.assert_allclose(getattr(soup, name), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(soup.Xmean, start.Xmean)
    assert "average" in soup.provenance and soup.provenance.count("MD5") == 3
    network = load_network_file(out)
    x = np.random.default_rng(0).normal(start.Xmean, start.Xstd).astype(np.float32)
    assert np.all(np.isfinite(network.predict(x, 1.0)))


def test_equal_shares_when_none_are_given_and_a_mann_stays_a_mann(tmp_path):
    start = make_mann_weights(seed=3)
    other = dataclasses.replace(start, W1=start.W1 + np.float32(0.25), g0=start.g0 - np.float32(0.5))
    for name, weights in (("a", start), ("b", other)):
        save_mann(weights, tmp_path / f"{name}.npz")
    out = tmp_path / "soup.npz"
    assert main(["average", str(out), str(tmp_path / "a.npz"), str(tmp_path / "b.npz")]) == 0
    kind, soup = read_network_weights(out)
    a, b = read_network_weights(tmp_path / "a.npz")[1], read_network_weights(tmp_path / "b.npz")[1]
    assert kind == "mann"
    np.testing.assert_allclose(soup.g0, (a.g0 + b.g0) / 2, atol=1e-6)
    np.testing.assert_allclose(soup.W1, (a.W1 + b.W1) / 2, atol=2e-3)   # experts are stored as float16
    np.testing.assert_array_equal(soup.gate_inputs, a.gate_inputs)


def test_a_mann_whose_gate_reads_the_phase_averages_with_one_whose_gate_does_not(tmp_path):
    """The gate that ignores the phase is widened with no weight on it: the average's gate reads
    the phase at the share of the network that reads it, and plays as the share-weighted mix."""
    plain = make_mann_weights(seed=3)
    reading = plain.with_phase_in_gate()
    reading = dataclasses.replace(reading, G0=reading.G0 + np.float32(0.1))      # a fine-tune that reads the phase
    save_mann(plain, tmp_path / "plain.npz")
    save_mann(reading, tmp_path / "reading.npz")
    out = tmp_path / "soup.npz"
    assert main(["average", str(out), f"{tmp_path / 'reading.npz'}:0.25", f"{tmp_path / 'plain.npz'}:0.75"]) == 0
    kind, soup = read_network_weights(out)
    assert kind == "mann" and soup.gate_phase
    phase_columns = slice(plain.G0.shape[1], None)
    np.testing.assert_allclose(soup.G0[:, phase_columns], 0.25 * reading.G0[:, phase_columns], atol=1e-6)
    np.testing.assert_allclose(soup.G0[:, :plain.G0.shape[1]], plain.G0 + np.float32(0.025), atol=1e-6)
    network = load_network_file(out)
    x = np.random.default_rng(0).normal(plain.Xmean, plain.Xstd).astype(np.float32)
    assert np.all(np.isfinite(network.predict(x, 1.0)))


def test_networks_that_cannot_be_averaged_are_one_line_errors(tmp_path, capsys):
    start = make_random_weights(seed=5)
    save_npz(start, tmp_path / "start.npz")
    save_npz(make_random_weights(seed=6), tmp_path / "stranger.npz")        # its own normalisation
    save_npz(make_random_weights(seed=5, sizes=(342, 32, 48, 311)), tmp_path / "small.npz")
    save_mann(make_mann_weights(seed=1), tmp_path / "mann.npz")
    save_mann(dataclasses.replace(make_mann_weights(seed=1), gate_ease=0.2), tmp_path / "eased.npz")
    start_path = str(tmp_path / "start.npz")
    cases = [
        ([str(tmp_path / "stranger.npz")], "fine-tuned from one start"),
        ([str(tmp_path / "small.npz")], "same sizes"),
        ([str(tmp_path / "mann.npz")], "one kind"),
        ([str(tmp_path / "nothing.npz")], "no such file"),
        # A MANN played with its blend eased otherwise is not the same start's network.
        ([str(tmp_path / "mann.npz"), str(tmp_path / "eased.npz")], "has another gate_ease"),
    ]
    for others, message in cases:
        first = others.pop(0) if len(others) > 1 else start_path
        assert main(["average", str(tmp_path / "out.npz"), first] + others) == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and message in error[0], error
    for parts, message in (([f"{start_path}:0.5", f"{start_path}:0.4"], "add up to 1"),
                           ([f"{start_path}:0.5", start_path], "every network a share"),
                           ([f"{start_path}:-1", start_path], "above 0"),
                           ([start_path], "at least two")):
        assert main(["average", str(tmp_path / "out.npz")] + parts) == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and message in error[0], error
    (tmp_path / "folder.npz").mkdir()
    for out, message in ((tmp_path / "out.txt", "must end in .npz"), (tmp_path / "folder.npz", "is a folder")):
        assert main(["average", str(out), start_path, start_path]) == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and message in error[0], error
    assert not (tmp_path / "out.npz").exists()
