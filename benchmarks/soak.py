"""Endurance: the interactive demo played with random input for a long time, offscreen.

    python benchmarks/soak.py [--minutes 10] [--network PATH] [--seed 0] [--size 640x360] [--no-render]

Drives the demo's own loop (`Demo`: keyboard events, the fixed 60 Hz tick, the menu's scene and
mode actions, recording start and stop, drawing with the HUD) exactly as a player's key presses
would, one tick per frame, rendering each frame into an offscreen EGL framebuffer. Along the way
it switches scene every minute (through every shipped scene in turn), cycles the network mode
every 45 s and records a few seconds now and then (written to a temporary folder, then deleted).
The first minute is a warm-up that visits every scene and every mode once, records once, and comes back to
the first scene in cubic mode, where memory is measured; the run also ends there (a bigger
terrain holds more memory while it is loaded, and the linear and constant modes their weight
tables, so memory is compared in the same scene and mode).

It reports, after every minute of play (3600 ticks) and at the end: frames simulated, network
failures, character resets, wall crossings (the root's step between two ticks crossing a wall's
centre line), frames spent outside the terrain, and the process's resident memory at the start,
after the first minute of play (the warm-up: everything loaded, built and drawn once) and at
the end. Memory must stay flat: growth after the first minute under 5 MB. The time limit is
wall time; for an hour: `--minutes 60`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pygame  # noqa: E402
from pfnn_demo.app.demo import TICK, Demo  # noqa: E402
from pfnn_demo.sim.phase_network import MODES, PhaseFunctionedNetwork  # noqa: E402
from pfnn_demo.resources import default_network_path  # noqa: E402
from pfnn_demo.sim.weights import load_weights  # noqa: E402
from pfnn_demo.sim.scene import steps_crossing_walls  # noqa: E402

MOVE_KEYS = (pygame.K_w, pygame.K_a, pygame.K_s, pygame.K_d)
HELD_KEYS = MOVE_KEYS + (pygame.K_LSHIFT, pygame.K_q, pygame.K_j, pygame.K_l)
WARM_UP = 60 * 60          # ticks: the first minute visits every scene and mode once
SCENE_EVERY = 60 * 60      # ticks, after the warm-up
MODE_EVERY = 45 * 60
RECORD_EVERY = 150 * 60    # a recording of RECORD_TICKS every 2.5 minutes
RECORD_TICKS = 5 * 60
WARM_UP_RECORDING = (100, 300)   # ticks: the warm-up also records (and writes) once


def resident_mb() -> float:
    """The process's resident set size in MB (Linux /proc; elsewhere the peak from getrusage)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RandomPlayer:
    """Seeded random key presses: a new movement every 0.3-2.5 s, now and then crouch or responsive."""

    def __init__(self, demo: Demo, seed: int):
        self.demo = demo
        self.rng = np.random.default_rng(seed)
        self.next_change = 0

    def tick(self, frame: int) -> None:
        if frame < self.next_change:
            return
        rng, demo = self.rng, self.demo
        self.next_change = frame + int(rng.uniform(0.3, 2.5) * 60)
        for key in HELD_KEYS:
            demo.on_key(key, False)
        held = [] if rng.random() < 0.2 else [key for key in MOVE_KEYS if rng.random() < 0.35]
        if rng.random() < 0.3:
            held.append(pygame.K_LSHIFT)
        if rng.random() < 0.15:
            held.append(pygame.K_q)
        if rng.random() < 0.2:
            held.append(pygame.K_j if rng.random() < 0.5 else pygame.K_l)
        for key in held:
            demo.on_key(key, True)
        for key, chance in ((pygame.K_c, 0.08), (pygame.K_r, 0.03), (pygame.K_F2, 0.02)):
            if rng.random() < chance:
                demo.on_key(key, True)
                demo.on_key(key, False)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to play, wall time (default 10)")
    parser.add_argument("--network", help="weights (.npz or original folder; default: the shipped network)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", default="640x360", help="offscreen picture size (default 640x360)")
    parser.add_argument("--no-render", action="store_true", help="simulate only, draw nothing")
    args = parser.parse_args(argv)
    size = tuple(int(v) for v in args.size.split("x"))

    from pfnn_demo.app.render.offscreen import OffscreenTarget, create_offscreen_context

    start_mb = resident_mb()
    path = args.network or default_network_path()
    weights, label = load_weights(path), str(path)
    pygame.display.init()
    ctx = create_offscreen_context()
    target = None if args.no_render else OffscreenTarget(ctx, size)
    record_dir = Path(tempfile.mkdtemp(prefix="pfnn-soak-"))
    demo = Demo(ctx, PhaseFunctionedNetwork(weights, "cubic"), "plaza", record_dir=record_dir)
    player = RandomPlayer(demo, args.seed)
    print(f"soak: {args.minutes:g} min of random play; network {label}; "
          + ("simulation only" if target is None else f"drawn offscreen at {size[0]}x{size[1]} on {ctx.info['GL_RENDERER']}")
          + f"; {len(demo.scene_names)} scenes", flush=True)

    crossings = off_terrain = resets = recordings = 0
    minute_mb, baseline_mode = None, "cubic"
    scene_index = 0
    deadline = time.monotonic() + 60 * args.minutes
    started = time.monotonic()
    frame = 0
    previous = demo.controller.root_position[[0, 2]]
    print("| minute of play | scene, mode | frames | failures | resets | wall crossings | off terrain | recordings | memory MB |")
    print("|---|---|---|---|---|---|---|---|---|", flush=True)

    def report(minute: float) -> None:
        print(f"| {minute:.0f} | {demo.controller.scene.name}, {demo.controller.network.mode} | {frame} | {demo.failures} | {resets} | {crossings} "
              f"| {off_terrain} | {recordings} | {resident_mb():.1f} |", flush=True)

    scenes = len(demo.scene_names)
    warm_up_stay = WARM_UP // (scenes + 1)     # every scene once, then back to the first one

    def play_one_tick() -> None:
        nonlocal frame, crossings, off_terrain, resets, previous
        jumped = False
        failures_before = demo.failures
        demo.update(TICK)
        if target is not None:
            demo.render(target.framebuffer)
        frame += 1
        controller = demo.controller
        root = controller.root_position[[0, 2]]
        x_min, x_max, z_min, z_max = controller.scene.heightmap.extent
        if not (x_min <= root[0] <= x_max and z_min <= root[1] <= z_max):
            off_terrain += 1
            controller.reset(controller.scene.start)
            resets += 1
            jumped = True
        if demo.failures != failures_before:
            resets += 1
            jumped = True
        if not jumped and steps_crossing_walls(controller.scene.areas.walls, previous[None], root[None])[0]:
            crossings += 1
        previous = controller.root_position[[0, 2]]

    def switch_scene(index: int) -> None:
        nonlocal scene_index, previous
        scene_index = index % scenes
        demo.load_scene(demo.scene_names[scene_index])
        previous = demo.controller.root_position[[0, 2]]

    while time.monotonic() < deadline:
        player.tick(frame)
        if frame < WARM_UP:
            if frame and frame % warm_up_stay == 0 and frame // warm_up_stay <= scenes:
                switch_scene(scene_index + 1)
            mode_stay = WARM_UP // (len(MODES) + 1)      # every mode once, then back to the first one
            if frame and frame % mode_stay == 0 and frame // mode_stay <= len(MODES):
                demo.on_key(pygame.K_m, True)
                demo.on_key(pygame.K_m, False)
        else:
            if frame > WARM_UP and (frame - WARM_UP) % SCENE_EVERY == 0:
                switch_scene(scene_index + 1)
            if frame % MODE_EVERY == 0:
                demo.on_key(pygame.K_m, True)
                demo.on_key(pygame.K_m, False)
        if frame % RECORD_EVERY == RECORD_EVERY - RECORD_TICKS or frame == WARM_UP_RECORDING[0]:
            demo.start_recording()
        elif (frame % RECORD_EVERY == RECORD_EVERY - 1 or frame == WARM_UP_RECORDING[1]) and demo.recording:
            recordings += bool(demo.stop_recording())
        play_one_tick()
        if frame % 3600 == 0:          # a minute of play
            if minute_mb is None:
                minute_mb, baseline_mode = resident_mb(), demo.controller.network.mode
            report(frame / 3600)
    # Measure the end in the scene and network mode the baseline was measured in: a bigger terrain
    # holds more memory while loaded, and the constant and linear modes hold their weight tables.
    if demo.recording:
        recordings += bool(demo.stop_recording())
    if scene_index != 0:
        switch_scene(0)
    demo.set_mode(baseline_mode)
    for _ in range(warm_up_stay):
        player.tick(frame)
        play_one_tick()
    for file in record_dir.glob("*"):
        file.unlink()
    record_dir.rmdir()

    end_mb = resident_mb()
    seconds = time.monotonic() - started
    baseline = minute_mb if minute_mb is not None else end_mb
    growth = end_mb - baseline
    print(f"\n{frame} frames in {seconds / 60:.1f} min ({frame / seconds:.1f} ticks/s, {frame / 60 / 60:.1f} min of play)")
    print(f"failures {demo.failures}, resets {resets}, wall crossings {crossings}, frames off terrain {off_terrain}, "
          f"recordings {recordings}")
    print(f"memory: {start_mb:.1f} MB at start, {baseline:.1f} MB after the first minute, {end_mb:.1f} MB at the end, "
          f"both in {demo.scene_names[0]}, {baseline_mode} mode "
          f"(growth after the first minute {growth:+.1f} MB: {'flat' if growth < 5 else 'GROWING'})")
    return 0 if growth < 5 and crossings == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
