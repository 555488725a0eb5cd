"""A crowd simulated together against the same characters stepped one by one, and the window's crowd.

    python benchmarks/bench_crowd.py [--network PATH] [--scene plaza] [--sizes 1,8,32,64,128,256]
                                     [--draw 1,16,64] [--size 1280x720] [--seconds 5]

Part 1, headless: for each network mode (and the MANN, --mann, and DeepPhase, --deepphase) and
crowd size N, the time of one tick of the batched step
(all N characters wandering) and of the wander behaviour that feeds it, beside the time of N
separate single-character steps (N one-character crowds stepped one after another under the same
inputs), measured in the same run; the ratio is how much the batching saves.

Part 2, the interactive demo drawing 1, 16 and 64 characters offscreen (EGL; Mesa's llvmpipe
without a GPU) at 1280x720 in cubic mode, run as the window runs it for a few seconds of wall time:
each frame polls input, catches the simulation up in fixed 1/60 s ticks and draws. Reported: the
ticks simulated per second (60 means the simulation holds real time), the pictures per second,
and the time per tick and per picture.

Part 3, where the time of one crowd tick goes (cubic, the largest size up to 64), by stage.

Part 4, with a glTF character (--character, by default ../shared/characters/RobotExpressive.glb
when it is there): the time to retarget N characters' drawn poses onto the rig, and part 2's
rows again with every character drawn as the rig.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench_network import choose_weights  # noqa: E402
from pfnn_demo.sim.controls import Controls  # noqa: E402
from pfnn_demo.sim.crowd import Crowd  # noqa: E402
from pfnn_demo.resources import shipped_network_path  # noqa: E402
from pfnn_demo.sim.networks import load_network_file  # noqa: E402
from pfnn_demo.sim.phase_network import MODES, PhaseFunctionedNetwork  # noqa: E402
from pfnn_demo.sim.scene import load_scene  # noqa: E402
from pfnn_demo.sim.wander import CrowdBehaviour, open_ground, spawn_points  # noqa: E402

WARM_UP = 30


def _sizes(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v]


def one_row(controls: Controls, i: int) -> Controls:
    return Controls(*(np.array(getattr(controls, field)[i:i + 1]) for field in
                      ("move", "camera_yaw", "strafe", "jog", "crouch", "responsive", "ik")))


def time_crowd(network, scene, count: int, ground) -> tuple[float, float, float]:
    """(ms per tick of the batched step, ms per tick of the behaviour, ms per tick of N single steps)."""
    starts = spawn_points(scene, count, 0, ground)
    behaviour = CrowdBehaviour(scene, count, 0, ground=ground)
    crowd = Crowd(network, scene, count, starts=starts)
    singles = [Crowd(network, scene, 1, starts=starts[i:i + 1]) for i in range(count)]
    for _ in range(WARM_UP):
        crowd.step(behaviour.next_controls(crowd.root_positions[:, [0, 2]]))
    ticks = max(10, min(120, 3000 // count))
    step = behave = single = 0.0
    for _ in range(ticks):
        start = time.perf_counter()
        controls = behaviour.next_controls(crowd.root_positions[:, [0, 2]])
        middle = time.perf_counter()
        crowd.step(controls)
        end = time.perf_counter()
        behave += middle - start
        step += end - middle
        rows = [one_row(controls, i) for i in range(count)]
        start = time.perf_counter()
        for alone, row in zip(singles, rows):
            alone.step(row)
        single += time.perf_counter() - start
    return step / ticks * 1e3, behave / ticks * 1e3, single / ticks * 1e3


def profile_stages(network, scene, count: int, ground) -> list[tuple[str, float]]:
    """Median ms per tick of each stage of Crowd.step, timed by wrapping its parts."""
    from pfnn_demo.sim import crowd as crowd_module

    crowd = Crowd(network, scene, count, starts=spawn_points(scene, count, 0, ground))
    behaviour = CrowdBehaviour(scene, count, 0, ground=ground)
    timings: dict[str, list[float]] = {}

    def timed(name, function):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            result = function(*args, **kwargs)
            timings.setdefault(name, []).append(time.perf_counter() - start)
            return result
        return wrapper

    trajectory = crowd.trajectory
    trajectory.predict = timed("trajectory prediction and walls", trajectory.predict)
    trajectory.apply_areas_and_heights = timed("areas and terrain heights", trajectory.apply_areas_and_heights)
    trajectory.write_input = timed("network input (trajectory part)", trajectory.write_input)
    trajectory.advance = timed("root advance and future trajectory", trajectory.advance)
    network_batch = network.predict_batch
    network.predict_batch = timed("network (one batch)", network_batch)
    crowd.ik.solve = timed("foot IK", crowd.ik.solve)
    original_update = crowd_module.update_targets
    crowd_module.update_targets = timed("control smoothing", original_update)
    total = []
    try:
        for tick in range(WARM_UP + 60):
            controls = behaviour.next_controls(crowd.root_positions[:, [0, 2]])
            start = time.perf_counter()
            crowd.step(controls)
            total.append(time.perf_counter() - start)
    finally:
        crowd_module.update_targets = original_update
        network.predict_batch = network_batch
    rows = [(name, float(np.median(values[WARM_UP:])) * 1e3) for name, values in timings.items()]
    whole = float(np.median(total[WARM_UP:])) * 1e3
    rows.append(("pose, smoothing, gait, phase (the rest)", max(whole - sum(ms for _, ms in rows), 0.0)))
    rows.append(("whole step", whole))
    return rows


def retarget_times(network, scene, counts: list[int], ground, character: str) -> list[tuple[int, float]]:
    """(N, median ms to retarget N characters' drawn poses onto the rig) per N."""
    from pfnn_demo.character import load_character

    _, _, retargeter = load_character(character)
    rows = []
    for count in counts:
        crowd = Crowd(network, scene, count, starts=spawn_points(scene, count, 0, ground))
        behaviour = CrowdBehaviour(scene, count, 0, ground=ground)
        times = []
        for tick in range(WARM_UP + 60):
            crowd.step(behaviour.next_controls(crowd.root_positions[:, [0, 2]]))
            start = time.perf_counter()
            retargeter(crowd.global_transforms, scene.heightmap.sample)
            times.append(time.perf_counter() - start)
        rows.append((count, float(np.median(times[WARM_UP:])) * 1e3))
    return rows


def draw_rates(weights, scene_name: str, counts: list[int], size: tuple[int, int], seconds: float,
               character: str | None = None):
    """(count, ticks per second, pictures per second, ms per tick, ms per picture) per count."""
    import pygame

    from pfnn_demo.app.demo import Demo
    from pfnn_demo.app.render.offscreen import OffscreenTarget, create_offscreen_context

    ctx = create_offscreen_context()
    target = OffscreenTarget(ctx, size)
    renderer_name = ctx.info.get("GL_RENDERER", "?")
    rows = []
    for count in counts:
        demo = Demo(ctx, PhaseFunctionedNetwork(weights, "cubic"), scene_name, characters=count, character=character)
        demo.controller.camera.distance = 700
        demo.on_key(pygame.K_w, True)
        for _ in range(30):
            demo.update(1 / 60)
        demo.render(target.framebuffer)
        ctx.finish()
        ticks = frames = 0
        tick_time = draw_time = 0.0
        start = last = time.perf_counter()
        while time.perf_counter() - start < seconds:
            now = time.perf_counter()
            ticks += demo.update(now - last)
            last = now
            middle = time.perf_counter()
            tick_time += middle - now
            demo.render(target.framebuffer)
            ctx.finish()
            draw_time += time.perf_counter() - middle
            frames += 1
        wall = time.perf_counter() - start
        rows.append((count, ticks / wall, frames / wall, tick_time / max(ticks, 1) * 1e3, draw_time / frames * 1e3))
    return renderer_name, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--network", help="weights (.npz or original folder; default: the shipped network)")
    parser.add_argument("--scene", default="plaza")
    parser.add_argument("--sizes", type=_sizes, default=[1, 8, 32, 64, 128, 256])
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--draw", type=_sizes, default=[1, 16, 64], help="crowd sizes to draw (empty: skip)")
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall time per drawn crowd size")
    shared_robot = Path(__file__).resolve().parents[2] / "shared" / "characters" / "RobotExpressive.glb"
    parser.add_argument("--character", default=str(shared_robot) if shared_robot.exists() else "",
                        help="a glTF rig for part 4 (default: the shared robot when present; empty: skip)")
    parser.add_argument("--skip-headless", action="store_true", help="only the drawing parts")
    shipped_mann = shipped_network_path("mann")
    parser.add_argument("--mann", default=str(shipped_mann) if shipped_mann.exists() else "",
                        help="a MANN whose crowd rows follow the PFNN's (default: network/mann.npz; empty: skip)")
    shipped_deepphase = shipped_network_path("deepphase")
    parser.add_argument("--deepphase", default=str(shipped_deepphase) if shipped_deepphase.exists() else "",
                        help="a DeepPhase controller whose crowd rows follow (default: network/deepphase.npz; "
                             "empty: skip)")
    args = parser.parse_args(argv)

    weights, label = choose_weights(args.network)
    scene = load_scene(args.scene)
    ground = open_ground(scene)
    print(f"network: {label}; scene {args.scene}; {os.cpu_count()} CPUs\n")
    if args.skip_headless:
        args.sizes, args.modes = [], ""
    print("Headless: one tick of N wandering characters (ms)\n")
    header = ("mode", "N", "batched step", "per character", "wander behaviour", "N single steps",
              "per character", "single / batched", "ticks per second (step + behaviour)")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    networks = [(mode, PhaseFunctionedNetwork(weights, mode)) for mode in args.modes.split(",") if mode]
    if args.mann and args.sizes:
        networks.append(("MANN", load_network_file(args.mann)))
    if args.deepphase and args.sizes:
        networks.append(("DeepPhase", load_network_file(args.deepphase)))
    for mode, network in networks:
        for count in args.sizes:
            step, behave, single = time_crowd(network, scene, count, ground)
            print(f"| {mode} | {count} | {step:.2f} | {step / count:.3f} | {behave:.2f} | {single:.1f} | "
                  f"{single / count:.3f} | {single / step:.1f}x | {1000 / (step + behave):.0f} |", flush=True)

    count = max([n for n in args.sizes if n <= 64] or [1])
    if args.sizes:
        print(f"\nWhere one tick goes (cubic, {count} characters, median ms)\n")
        print("| stage | ms | share |")
        print("|---|---|---|")
        rows = profile_stages(PhaseFunctionedNetwork(weights, "cubic"), scene, count, ground)
        whole = rows[-1][1]
        for name, ms in rows:
            print(f"| {name} | {ms:.2f} | {ms / whole:.0%} |")

    if args.draw:
        width, height = (int(v) for v in args.size.lower().split("x"))
        renderer, rows = draw_rates(weights, args.scene, args.draw, (width, height), args.seconds)
        print(f"\nThe interactive demo drawing offscreen at {width}x{height} ({renderer}), cubic, "
              f"{args.seconds:.0f} s of wall time each\n")
        print("| characters | ticks per second | pictures per second | ms per tick | ms per picture |")
        print("|---|---|---|---|---|")
        for count, tps, fps, tick_ms, draw_ms in rows:
            print(f"| {count} | {tps:.1f} | {fps:.1f} | {tick_ms:.2f} | {draw_ms:.1f} |")
    if args.character:
        name = Path(args.character).name
        print(f"\nRetargeting onto {name}: N characters' drawn poses per tick (median ms)\n")
        print("| characters | retargeting | per character |")
        print("|---|---|---|")
        for count, ms in retarget_times(PhaseFunctionedNetwork(weights, "cubic"), scene, [1, 16, 64], ground,
                                        args.character):
            print(f"| {count} | {ms:.2f} | {ms / count:.3f} |")
        if args.draw:
            renderer, rows = draw_rates(weights, args.scene, args.draw, (width, height), args.seconds, args.character)
            print(f"\nThe demo drawing every character as {name} at {width}x{height} ({renderer}), cubic\n")
            print("| characters | ticks per second | pictures per second | ms per tick | ms per picture |")
            print("|---|---|---|---|---|")
            for count, tps, fps, tick_ms, draw_ms in rows:
                print(f"| {count} | {tps:.1f} | {fps:.1f} | {tick_ms:.2f} | {draw_ms:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
