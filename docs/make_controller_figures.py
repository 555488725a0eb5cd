"""Render the controller guide's figures: the PFNN, the MANN and the DeepPhase controller side by
side under the same inputs (docs/controllers.png), the MANN gate's expert weights through a
stop-and-go and a jump (docs/mann_gate.png), the DeepPhase controller's phase channels
through the same (docs/deepphase_channels.png), and the PFNN's and the MANN's heel contacts
against their phase while crouch walking (docs/mann_contacts.png).

    python docs/make_controller_figures.py [--pfnn network/pfnn.npz] [--mann network/mann.npz]
                                           [--deepphase network/deepphase.npz] [--only FIGURE ...]

Every picture is simulated headless and rendered offscreen (EGL).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from make_frame_strip import tile_screenshots

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
REPO = Path(__file__).resolve().parents[1]
SHOTS = [  # (arguments of `pfnn-demo screenshot`, label)
    (["--script", "stop_and_go", "--scene", "plaza", "--frames", "100", "--camera-yaw", "90"], "starting"),
    (["--script", "stop_and_go", "--scene", "plaza", "--frames", "250", "--camera-yaw", "90"], "stopping"),
    (["--script", "turn_180", "--scene", "plaza", "--frames", "150", "--camera-yaw", "90"], "turning round"),
    (["--script", "crouch_through", "--scene", "tunnel", "--frames", "420"], "crouching in the tunnel"),
    (["--script", "jump_bars", "--scene", "jumps", "--frames", "158", "--camera-yaw", "90"], "jumping a bar"),
]
GATE_CASES = [("stop_and_go", "plaza", 600), ("jump_bars", "jumps", 420)]
CONTACT_CASE = ("crouch_walk", "urban", 780, 1380)    # crouch walking by button: 10 s
EXPERT_COLOURS = [(70, 110, 200), (230, 140, 40), (60, 170, 90), (200, 60, 70), (140, 90, 190), (120, 80, 50),
                  (220, 120, 180), (120, 120, 120), (180, 180, 50), (60, 180, 190)]


def strip(out: Path, networks: list[tuple[str, str]]) -> None:
    rows = [[(arguments + ["--network", path, "--no-debug"], f"{name}: {label}") for arguments, label in SHOTS]
            for name, path in networks]
    tile_screenshots(out, rows)


def gate_traces(mann: str, read=lambda controller: controller.expert_weights,
                cases=GATE_CASES) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(case, what `read` gives of the player per frame (T, ...), gait weights (T, 6)) per case
    (script, scene, frames): by default the MANN's expert weights (T, K)."""
    from pfnn_demo.library import load_network
    from pfnn_demo.sim.controller import Controller
    from pfnn_demo.sim.input_script import InputScript
    from pfnn_demo.sim.scene import load_scene

    traces = []
    for script_name, scene_name, frames in cases:
        script = InputScript.load(script_name)
        scene = load_scene(scene_name)
        controller = Controller(load_network(mann), scene, starts=script.starts_in(scene))
        experts, gaits = [], []
        for frame in range(frames):
            controller.step(script.state(frame))
            experts.append(np.array(read(controller)))
            gaits.append(np.asarray(controller.pose().gait, float))
        traces.append((f"{script_name} @ {scene_name}", np.array(experts), np.array(gaits)))
    return traces


def _frame_and_gait(surface, font, gaits: np.ndarray, xs: np.ndarray, box: tuple, band: int) -> None:
    """A plot's frame in `box` (left, top, width, height), its seconds, and the gait band beneath."""
    import pygame

    from pfnn_demo.sim.features import GAIT_NAMES

    left, top, plot_width, panel = box
    frames = len(gaits)
    pygame.draw.rect(surface, (0, 0, 0), box, 1)
    for second in range(int(frames / 60) + 1):
        x = left + second * 60 * plot_width / max(frames - 1, 1)
        surface.blit(font.render(f"{second}s", True, (90, 90, 90)), (x - 8, top + panel + band + 4))
    gait = np.argmax(gaits, axis=1)
    step = plot_width / max(frames - 1, 1)
    for frame in range(frames):
        shade = [255 - (255 - c) // 3 for c in EXPERT_COLOURS[(gait[frame] + 3) % len(EXPERT_COLOURS)]]
        pygame.draw.rect(surface, shade, (int(xs[frame]), top + panel + 2, int(step) + 1, band - 2))
    changes = [0] + [f for f in range(1, frames) if gait[f] != gait[f - 1]]
    for frame in changes:
        surface.blit(font.render(GAIT_NAMES[gait[frame]], True, (0, 0, 0)), (xs[frame] + 2, top + panel + 2))


def gate_plot(out: Path, mann: str) -> None:
    """Stacked expert weights over time, one panel per case, with the gait labels beneath."""
    import pygame

    pygame.font.init()
    font = pygame.font.Font(None, 22)
    traces = gate_traces(mann)
    width, panel, band = 1100, 220, 18
    surface = pygame.Surface((width, len(traces) * (panel + band + 50) + 40))
    surface.fill((255, 255, 255))
    top = 10
    for case, experts, gaits in traces:
        frames, count = experts.shape
        surface.blit(font.render(f"{case}: the gate's expert weights (stacked) and the gait, "
                                 f"{frames / 60:.0f} s", True, (0, 0, 0)), (10, top))
        top += 24
        left, plot_width = 60, width - 80
        xs = left + np.arange(frames) * plot_width / max(frames - 1, 1)
        cumulative = np.concatenate([np.zeros((frames, 1)), np.cumsum(experts, axis=1)], axis=1)
        for k in range(count):
            upper = top + panel * (1 - cumulative[:, k + 1])
            lower = top + panel * (1 - cumulative[:, k])
            points = list(zip(xs, upper)) + list(zip(xs[::-1], lower[::-1]))
            pygame.draw.polygon(surface, EXPERT_COLOURS[k % len(EXPERT_COLOURS)], points)
        _frame_and_gait(surface, font, gaits, xs, (left, top, plot_width, panel), band)
        top += panel + band + 26
    pygame.image.save(surface, str(out))


def manifold_plot(out: Path, deepphase: str) -> None:
    """Each phase channel of the player as its manifold curve (amplitude times the sine of the
    phase) over time, one panel per case, with the gait beneath."""
    import pygame

    from pfnn_demo.sim.deepphase import AMPLITUDE, PHASE

    pygame.font.init()
    font = pygame.font.Font(None, 22)
    traces = gate_traces(deepphase, lambda controller: controller.phase_manifold)
    width, lane, band = 1100, 56, 18
    channels = traces[0][1].shape[1]
    panel = lane * channels
    surface = pygame.Surface((width, len(traces) * (panel + band + 50) + 40))
    surface.fill((255, 255, 255))
    top = 10
    for case, manifold, gaits in traces:
        frames = len(manifold)
        surface.blit(font.render(f"{case}: each phase channel, amplitude x sin(2 pi phase), and the gait, "
                                 f"{frames / 60:.0f} s", True, (0, 0, 0)), (10, top))
        top += 24
        left, plot_width = 60, width - 80
        xs = left + np.arange(frames) * plot_width / max(frames - 1, 1)
        scale = np.maximum(manifold[:, :, AMPLITUDE].max(axis=0), 1e-6)
        for k in range(channels):
            middle = top + lane * k + lane / 2
            pygame.draw.line(surface, (210, 210, 210), (left, middle), (left + plot_width, middle))
            curve = manifold[:, k, AMPLITUDE] * np.sin(2 * np.pi * manifold[:, k, PHASE]) / scale[k]
            points = [(float(x), float(y)) for x, y in zip(xs, middle - 0.45 * lane * curve)]
            pygame.draw.lines(surface, EXPERT_COLOURS[k % len(EXPERT_COLOURS)], False, points, 2)
            surface.blit(font.render(f"{k}", True, (0, 0, 0)), (left - 20, middle - 8))
        _frame_and_gait(surface, font, gaits, xs, (left, top, plot_width, panel), band)
        top += panel + band + 26
    pygame.image.save(surface, str(out))


def contacts_plot(out: Path, networks: list[tuple[str, str]]) -> None:
    """Each network's left and right heel contact outputs through CONTACT_CASE, one panel per
    network with the gait beneath, the contact threshold of one half drawn across and a tick at
    each half turn of the phase (a step the phase counts); the title counts those steps and the
    heels coming down (their contact rising over one half)."""
    import pygame

    script_name, scene_name, first, last = CONTACT_CASE
    heels_and_phase = lambda controller: np.r_[controller.pose().contacts[[0, 2]], controller.pose().phase]  # noqa: E731
    pygame.font.init()
    font = pygame.font.Font(None, 22)
    width, panel, band = 1100, 150, 18
    surface = pygame.Surface((width, len(networks) * (panel + band + 50) + 20))
    surface.fill((255, 255, 255))
    top = 10
    for name, path in networks:
        (_, trace, gaits), = gate_traces(path, heels_and_phase, [(script_name, scene_name, last)])
        heels, half_turns, gaits = trace[first:, :2], np.floor(np.unwrap(trace[first:, 2]) / np.pi), gaits[first:]
        strikes = int(np.sum(np.diff((heels > 0.5).astype(int), axis=0) == 1))
        steps = int(half_turns[-1] - half_turns[0])
        surface.blit(font.render(f"{name}, {script_name} @ {scene_name} from {first / 60:.0f} s: heel contacts "
                                 f"(left blue, right orange) and the gait; {steps} steps by its phase (ticks), "
                                 f"{strikes} heels down", True, (0, 0, 0)), (10, top))
        top += 24
        left, plot_width = 60, width - 80
        xs = left + np.arange(len(heels)) * plot_width / max(len(heels) - 1, 1)
        pygame.draw.line(surface, (190, 190, 190), (left, top + panel / 2), (left + plot_width, top + panel / 2))
        for frame in np.flatnonzero(np.diff(half_turns)) + 1:
            pygame.draw.line(surface, (120, 120, 120), (xs[frame], top + panel - 12), (xs[frame], top + panel))
        for side, colour in enumerate(EXPERT_COLOURS[:2]):
            values = np.clip(heels[:, side], 0.0, 1.0)
            points = [(float(x), float(top + panel * (1 - v))) for x, v in zip(xs, values)]
            pygame.draw.lines(surface, colour, False, points, 2)
        _frame_and_gait(surface, font, gaits, xs, (left, top, plot_width, panel), band)
        top += panel + band + 26
    pygame.image.save(surface, str(out))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pfnn", default=str(REPO / "network" / "pfnn.npz"))
    parser.add_argument("--mann", default=str(REPO / "network" / "mann.npz"))
    parser.add_argument("--deepphase", default=str(REPO / "network" / "deepphase.npz"))
    parser.add_argument("--out-dir", default=str(Path(__file__).parent), help="folder of the pictures")
    figures = {
        "mann_gate.png": lambda out: gate_plot(out, options.mann),
        "deepphase_channels.png": lambda out: manifold_plot(out, options.deepphase),
        "mann_contacts.png": lambda out: contacts_plot(out, [("PFNN", options.pfnn), ("MANN", options.mann)]),
        "controllers.png": lambda out: strip(out, [("PFNN", options.pfnn), ("MANN", options.mann),
                                                   ("DeepPhase", options.deepphase)]),
    }
    parser.add_argument("--only", nargs="+", choices=sorted(figures), metavar="FIGURE",
                        help=f"make these figures alone: {', '.join(sorted(figures))} (default: all)")
    options = parser.parse_args()
    folder = Path(options.out_dir)
    folder.mkdir(parents=True, exist_ok=True)     # as the other figure scripts do
    for name in options.only or figures:
        figures[name](folder / name)
        print(f"wrote {folder / name}")
