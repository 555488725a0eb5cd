"""Time per frame of the full simulation step (predictor, network, IK) in each network mode.

    python benchmarks/bench_sim.py [--network PATH] [--frames 3000] [--script walk_circle]

Median and p99 over the frames of an example script, with the share spent in the network
(timed separately in the same run), and how many times faster than real time (60 Hz) that is.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_network import choose_weights  # noqa: E402

from pfnn_demo.sim.controller import Controller  # noqa: E402
from pfnn_demo.sim.input_script import InputScript  # noqa: E402
from pfnn_demo.sim.phase_network import MODES, PhaseFunctionedNetwork  # noqa: E402
from pfnn_demo.sim.scene import load_scene  # noqa: E402


class TimedNetwork:
    """Wraps a network to add up the time spent inside its batch evaluation."""

    def __init__(self, network: PhaseFunctionedNetwork):
        self.network = network
        self.weights = network.weights
        self.input_size, self.output_size = network.input_size, network.output_size
        self.mode = network.mode
        self.seconds = 0.0

    def predict_batch(self, x, phases):
        start = time.perf_counter()
        y = self.network.predict_batch(x, phases)
        self.seconds += time.perf_counter() - start
        return y


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--network", help="weights (.npz or original folder)")
    parser.add_argument("--frames", type=int, default=3000)
    parser.add_argument("--script", default="walk_circle")
    parser.add_argument("--scene", default="plaza")
    args = parser.parse_args(argv)

    weights, label = choose_weights(args.network)
    script = InputScript.load(args.script)
    scene = load_scene(args.scene)
    print(f"network: {label}; script {args.script} in {args.scene}, {args.frames} frames per mode\n")
    header = ("mode", "median ms", "p99 ms", "network ms (median share)", "x real time (median)")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for mode in MODES:
        network = TimedNetwork(PhaseFunctionedNetwork(weights, mode))
        controller = Controller(network, scene)
        times, network_times = [], []
        for frame in range(args.frames):
            controls = script.state(frame % script.frames)
            network.seconds = 0.0
            start = time.perf_counter()
            controller.step(controls)
            times.append(time.perf_counter() - start)
            network_times.append(network.seconds)
        median = statistics.median(times) * 1e3
        p99 = float(np.percentile(times, 99)) * 1e3
        network_median = statistics.median(network_times) * 1e3
        print(f"| {mode} | {median:.3f} | {p99:.3f} | {network_median:.3f} ({network_median / median:.0%}) "
              f"| {1000 / 60 / median:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
