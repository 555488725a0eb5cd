"""Render docs/frames.png: the default network playing each example script, a row of frames each.

    python docs/make_frame_strip.py [--network PATH] [--out docs/frames.png]

Every frame is simulated headless from the script's start and rendered offscreen (EGL), so it
needs no display; the pictures are tiled with pygame.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402

from pfnn_demo.tools.cli import main  # noqa: E402

ROWS = {                       # script: (scene, frames to show at 60 per second)
    "walk_circle": ("plaza", (100, 200, 600, 1600)),
    "jog_and_stop": ("plaza", (150, 270, 400, 560)),
    "turn_180": ("plaza", (200, 330, 620, 770)),
    "strafe": ("plaza", (150, 330, 510, 690)),
    "crouch_through": ("tunnel", (200, 420, 780, 960)),
    "stop_and_go": ("plaza", (200, 420, 860, 1090)),
    "sharp_turns": ("plaza", (250, 280, 310, 840)),
    "jump_bars": ("jumps", (140, 158, 172, 186)),
    "terraces": ("terraces", (230, 300, 360, 420)),
}
TILE = (320, 240)


def tile_screenshots(out: Path, rows: list[list[tuple[list[str], str]]], tile: tuple[int, int] = TILE) -> None:
    """Render every tile, (arguments of `pfnn-demo screenshot` after its output, label), with
    `pfnn-demo screenshot` at `tile` size without the HUD, and lay them out a row per list."""
    pygame.init()
    font = pygame.font.Font(None, 22)
    sheet = pygame.Surface((tile[0] * max(len(row) for row in rows), tile[1] * len(rows)))
    with tempfile.TemporaryDirectory() as folder:
        for r, row in enumerate(rows):
            for column, (arguments, label) in enumerate(row):
                path = Path(folder) / f"{r}_{column}.png"
                if main(["screenshot", str(path), "--no-hud", "--size", f"{tile[0]}x{tile[1]}"] + arguments) != 0:
                    raise SystemExit(f"could not render {label}")
                sheet.blit(pygame.image.load(str(path)), (column * tile[0], r * tile[1]))
                sheet.blit(font.render(label, True, (255, 255, 255)), (column * tile[0] + 6, r * tile[1] + 6))
    out.parent.mkdir(parents=True, exist_ok=True)
    pygame.image.save(sheet, str(out))
    print(f"wrote {out}")


def render(out: Path, network: str | None) -> None:
    chosen = ["--network", network] if network else []
    tile_screenshots(out, [[(["--script", script, "--scene", scene, "--frames", str(frame)] + chosen,
                             f"{script}  {frame / 60:.1f} s") for frame in frames]
                           for script, (scene, frames) in ROWS.items()])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", help="network to show (default: the shipped one)")
    parser.add_argument("--out", default=str(Path(__file__).with_name("frames.png")), help="picture to write")
    options = parser.parse_args()
    render(Path(options.out), options.network)
