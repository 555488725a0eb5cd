"""Frame time of the interactive demo, offscreen at 1280x720, on whatever OpenGL is available.

    python benchmarks/bench_render.py [--network PATH] [--frames 300] [--size 1280x720]

Runs the demo's own loop (input, fixed 60 Hz simulation, drawing with HUD) with the walk key
held, as fast as it can, and reports the drawing time per frame and whether the simulation kept
its 60 ticks per second of wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pygame  # noqa: E402
from bench_network import choose_weights  # noqa: E402

from pfnn_demo.app.demo import Demo  # noqa: E402
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork  # noqa: E402
from pfnn_demo.app.render.offscreen import OffscreenTarget, create_offscreen_context  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--network", help="weights (.npz or original folder)")
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--scene", default="plaza")
    args = parser.parse_args(argv)
    size = tuple(int(v) for v in args.size.split("x"))

    weights, label = choose_weights(args.network)
    pygame.display.init()
    ctx = create_offscreen_context()
    target = OffscreenTarget(ctx, size)
    demo = Demo(ctx, PhaseFunctionedNetwork(weights, "cubic"), args.scene)
    demo.on_key(pygame.K_w, True)
    print(f"OpenGL: {ctx.info['GL_RENDERER']} ({ctx.info['GL_VERSION']}); network: {label}; "
          f"{size[0]}x{size[1]}, {args.frames} frames\n")

    for _ in range(10):   # warm-up: shader compilation, first uploads
        demo.update(1 / 60)
        demo.render(target.framebuffer)
    ctx.finish()

    draw_times, ticks = [], 0
    start = last = time.perf_counter()
    for _ in range(args.frames):
        now = time.perf_counter()
        ticks += demo.update(now - last)
        last = now
        t0 = time.perf_counter()
        demo.render(target.framebuffer)
        ctx.finish()
        draw_times.append(time.perf_counter() - t0)
    wall = time.perf_counter() - start
    median = statistics.median(draw_times) * 1e3
    p90 = float(np.percentile(draw_times, 90)) * 1e3
    fps = args.frames / wall

    header = ("draw median ms", "draw p90 ms", "frames per second", "simulation ticks per second")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    print(f"| {median:.1f} | {p90:.1f} | {fps:.1f} | {ticks / wall:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
