"""Per-call time of the PFNN runtime in each mode, against a naive blend-then-multiply, same run;
then the MANN's call and the DeepPhase controller's (its network with the manifold read along the
trajectory and moved on) against the PFNN's cubic call for 1, 64 and 256 characters.

    python benchmarks/bench_network.py [--network PATH] [--mann PATH] [--deepphase PATH] [--calls 3000]

Without --network it uses the original network from ../shared/reference when present (the
numbers in the README), else the project's shipped network, else a random one of the same size.
Two phase patterns per mode: `fixed` (the same phase every call, weights warm in cache) and
`advancing` (phase += 0.105 rad per call, the demo's typical gait speed, so constant mode reads a
new weight set almost every call).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pfnn_demo.sim.phase_network import MODES, PhaseFunctionedNetwork, elu  # noqa: E402
from pfnn_demo.resources import default_network_path, shipped_network_path  # noqa: E402
from pfnn_demo.sim import deepphase  # noqa: E402
from pfnn_demo.sim.features import read_output  # noqa: E402
from pfnn_demo.sim.mann import GATE_INPUTS, MannWeights, ModeAdaptiveNetwork  # noqa: E402
from pfnn_demo.sim.policy import ManifoldPolicy  # noqa: E402
from pfnn_demo.sim.networks import load_network_file  # noqa: E402
from pfnn_demo.sim.weights import NetworkWeights, catmull_rom_weights, load_weights  # noqa: E402

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "pfnn_original" / "control_points.npz"
PHASE_STEP = 0.105  # radians per frame: about one gait cycle per second at 60 Hz


def random_weights(rng: np.random.Generator, sizes=(342, 512, 512, 311)) -> NetworkWeights:
    arrays = {}
    for layer, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        arrays[f"W{layer}"] = rng.normal(0, 1 / np.sqrt(n_in), (4, n_out, n_in)).astype(np.float32)
        arrays[f"b{layer}"] = rng.normal(0, 0.1, (4, n_out)).astype(np.float32)
    return NetworkWeights(**arrays, Xmean=np.zeros(sizes[0], np.float32), Xstd=np.ones(sizes[0], np.float32),
                          Ymean=np.zeros(sizes[-1], np.float32), Ystd=np.ones(sizes[-1], np.float32),
                          provenance="random benchmark network")


def choose_weights(path: str | None) -> tuple[NetworkWeights, str]:
    if path:
        return load_weights(path), path
    if REFERENCE.is_file():
        data = np.load(REFERENCE)
        return NetworkWeights(**{key: data[key] for key in data.files}), "original PFNN (../shared/reference)"
    if default_network_path().is_file():
        return load_weights(default_network_path()), str(default_network_path())
    return random_weights(np.random.default_rng(0)), "random network of the original's size"


class NaiveNetwork:
    """Blend the 4 control-point matrices of every layer (float32), then multiply: the textbook way."""

    def __init__(self, weights: NetworkWeights):
        self.weights = weights

    def predict(self, x: np.ndarray, phase: float) -> np.ndarray:
        blend = catmull_rom_weights(phase).astype(np.float32)
        w = self.weights
        h = (x - w.Xmean) / w.Xstd
        for depth, (weight_points, bias_points) in enumerate(w.layers()):
            matrix = (blend[0] * weight_points[0] + blend[1] * weight_points[1]
                      + blend[2] * weight_points[2] + blend[3] * weight_points[3])
            h = matrix @ h + blend @ bias_points
            if depth < 2:
                h = np.where(h > 0, h, np.expm1(np.minimum(h, 0)))
        return h * w.Ystd + w.Ymean


def random_mann(rng: np.random.Generator, experts: int = 8, sizes=(342, 512, 512, 311), gate: int = 64,
                gate_inputs=GATE_INPUTS) -> MannWeights:
    arrays = {}
    for layer, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        arrays[f"W{layer}"] = rng.normal(0, 1 / np.sqrt(n_in), (experts, n_out, n_in)).astype(np.float32)
        arrays[f"b{layer}"] = rng.normal(0, 0.1, (experts, n_out)).astype(np.float32)
    for layer, (n_in, n_out) in enumerate(zip((len(gate_inputs), gate, gate), (gate, gate, experts))):
        arrays[f"G{layer}"] = rng.normal(0, 1 / np.sqrt(n_in), (n_out, n_in)).astype(np.float32)
        arrays[f"g{layer}"] = np.zeros(n_out, np.float32)
    return MannWeights(**arrays, gate_inputs=gate_inputs, Xmean=np.zeros(sizes[0], np.float32),
                       Xstd=np.ones(sizes[0], np.float32), Ymean=np.zeros(sizes[-1], np.float32),
                       Ystd=np.ones(sizes[-1], np.float32), provenance="random benchmark MANN")


def choose_mann(path: str | None) -> tuple[MannWeights, str]:
    shipped = shipped_network_path("mann")
    if path or shipped.is_file():
        return load_network_file(path or shipped).weights, str(path or shipped)
    return random_mann(np.random.default_rng(0)), "random MANN of 8 experts of 512"


def choose_deepphase(path: str | None):
    """The DeepPhase network to time: given, shipped, or random of 8 experts of 512 and 5 channels."""
    shipped = shipped_network_path("deepphase")
    if path or shipped.is_file():
        return load_network_file(path or shipped), str(path or shipped)
    channels = 5
    sizes = (342 + deepphase.phase_input_size(channels), 512, 512, 311 + deepphase.phase_output_size(channels))
    weights = random_mann(np.random.default_rng(3), sizes=sizes, gate_inputs=deepphase.gate_inputs(channels))
    return deepphase.DeepPhaseNetwork(weights), "random DeepPhase of 8 experts of 512, 5 channels"


def deepphase_step(network, count: int):
    """One controller call of N characters as the crowd makes it: the manifold read into the
    inputs, the network, the manifold moved on."""
    policy = ManifoldPolicy(network)
    state = policy.initial_state(count)
    state["manifold"][..., 1] = 1.0
    still = np.ones(count)

    def call(x, _phases):
        y, _ = policy.evaluate(x, state)
        policy.advance(state, y, read_output(y), still)
    return call


class BlendPerCharacterMann(ModeAdaptiveNetwork):
    """The other way to batch a MANN: blend each character's K expert matrices by its gate, then
    multiply (K*out*in multiply-adds and an out*in matrix written per character)."""

    def predict_batch(self, x, _unused=None):
        w = self.weights
        hidden = (np.atleast_2d(x).astype(np.float32) - self._x_mean) * self._x_scale
        blend = self.gate(hidden).astype(np.float32)
        out = np.empty((len(hidden), w.output_size), np.float32)
        for row in range(len(hidden)):
            h = hidden[row]
            for depth, (weights, biases) in enumerate(w.expert_layers()):
                h = np.tensordot(blend[row], weights, axes=1) @ h + blend[row] @ biases
                if depth < 2:
                    h = elu(h)
            out[row] = h
        return out * self._y_std + self._y_mean


def time_batches(predict, x: np.ndarray, phases: np.ndarray, repeats: int) -> float:
    """Median ms of predict(x, phases) over `repeats` calls."""
    for _ in range(3):
        predict(x, phases)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        predict(x, phases)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def mann_rows(weights: NetworkWeights, mann: MannWeights, deep, calls: int) -> list[tuple]:
    """(N, PFNN cubic ms, MANN ms, DeepPhase ms, MANN blending per character ms) for N = 1, 64, 256."""
    rng = np.random.default_rng(2)
    pfnn = PhaseFunctionedNetwork(weights, "cubic")
    stacked, per_character = ModeAdaptiveNetwork(mann), BlendPerCharacterMann(mann)
    rows = []
    for count in (1, 64, 256):
        x = rng.normal(weights.Xmean, weights.Xstd * 0.5, (count, weights.input_size)).astype(np.float32)
        phases = rng.uniform(0, 2 * np.pi, count)
        repeats = max(calls // count, 10)
        rows.append((count, time_batches(pfnn.predict_batch, x, phases, repeats),
                     time_batches(stacked.predict_batch, x, phases, repeats),
                     time_batches(deepphase_step(deep, count), x, phases, repeats),
                     time_batches(per_character.predict_batch, x, phases, max(repeats // 10, 3))))
    return rows


def time_calls(predict, x: np.ndarray, calls: int, step: float) -> list[float]:
    for i in range(50):  # warm-up
        predict(x, i * step)
    times = []
    phase = 0.3
    for _ in range(calls):
        start = time.perf_counter()
        predict(x, phase)
        times.append(time.perf_counter() - start)
        phase = (phase + step) % (2 * np.pi)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--network", help="weights to time (.npz or original folder)")
    parser.add_argument("--mann", help="MANN to time (default: network/mann.npz, else a random one of 8 experts of 512)")
    parser.add_argument("--deepphase", help="DeepPhase controller to time (default: network/deepphase.npz, else "
                                            "a random one of 8 experts of 512)")
    parser.add_argument("--calls", type=int, default=3000, help="timed calls per row (default 3000)")
    args = parser.parse_args(argv)

    weights, label = choose_weights(args.network)
    x = np.random.default_rng(1).normal(weights.Xmean, weights.Xstd * 0.5).astype(np.float32)
    print(f"network: {label}; sizes {weights.input_size}-{weights.hidden_sizes[0]}-"
          f"{weights.hidden_sizes[1]}-{weights.output_size}; median of {args.calls} calls per row\n")

    naive = NaiveNetwork(weights)
    naive_fixed = statistics.median(time_calls(naive.predict, x, args.calls, 0.0)) * 1e3
    naive_moving = statistics.median(time_calls(naive.predict, x, args.calls, PHASE_STEP)) * 1e3

    rows = []
    for mode in MODES:
        network = PhaseFunctionedNetwork(weights, mode)
        fixed = statistics.median(time_calls(network.predict, x, args.calls, 0.0)) * 1e3
        moving_times = time_calls(network.predict, x, args.calls, PHASE_STEP)
        moving = statistics.median(moving_times) * 1e3
        p99 = float(np.percentile(moving_times, 99)) * 1e3
        memory = network.nbytes
        rows.append((mode, fixed, moving, p99, naive_fixed / fixed, naive_moving / moving,
                     memory["mode_tables"] / 2**20, memory["total"] / 2**20))
    rows.append(("naive cubic", naive_fixed, naive_moving, float("nan"), 1.0, 1.0, 0.0,
                 sum(w.nbytes + b.nbytes for w, b in weights.layers()) / 2**20))

    header = ("mode", "fixed ms", "advancing ms", "adv. p99 ms", "x naive (fixed)", "x naive (adv.)",
              "tables MiB", "total MiB")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for mode, fixed, moving, p99, speedup_fixed, speedup_moving, tables, total in rows:
        print(f"| {mode} | {fixed:.3f} | {moving:.3f} | {p99:.3f} | {speedup_fixed:.1f} | {speedup_moving:.1f} "
              f"| {tables:.1f} | {total:.1f} |")

    mann, mann_label = choose_mann(args.mann)
    deep, deep_label = choose_deepphase(args.deepphase)
    print(f"\nThe MANN ({mann_label}; {mann.experts} experts of {mann.W0.shape[1]}) and the DeepPhase controller "
          f"({deep_label}; {deep.experts} experts, {deep.channels} phase channels) against the PFNN above in cubic "
          "mode, N characters in one batch (median ms per call; the crowd's path)\n")
    header = ("N", "PFNN cubic", "MANN", "MANN / PFNN", "DeepPhase", "DeepPhase / PFNN",
              "MANN blending weights per character")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for count, pfnn_ms, mann_ms, deep_ms, blend_ms in mann_rows(weights, mann, deep, args.calls):
        print(f"| {count} | {pfnn_ms:.3f} | {mann_ms:.3f} | {mann_ms / pfnn_ms:.2f}x | {deep_ms:.3f} | "
              f"{deep_ms / pfnn_ms:.2f}x | {blend_ms:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
