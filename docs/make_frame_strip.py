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


def render(out: Path, network: str | None) -> None:
    pygame.init()
    font = pygame.font.Font(None, 22)
    sheet = pygame.Surface((TILE[0] * 4, TILE[1] * len(ROWS)))
    with tempfile.TemporaryDirectory() as folder:
        for row, (script, (scene, frames)) in enumerate(ROWS.items()):
            for column, frame in enumerate(frames):
                path = Path(folder) / f"{script}_{frame}.png"
                args = ["screenshot", str(path), "--script", script, "--scene", scene, "--frames", str(frame), "--no-hud",
                        "--size", f"{TILE[0]}x{TILE[1]}"] + (["--network", network] if network else [])
                if main(args) != 0:
                    raise SystemExit(f"could not render {script} frame {frame}")
                sheet.blit(pygame.image.load(str(path)), (column * TILE[0], row * TILE[1]))
                label = font.render(f"{script}  {frame / 60:.1f} s", True, (255, 255, 255))
                sheet.blit(label, (column * TILE[0] + 6, row * TILE[1] + 6))
    out.parent.mkdir(parents=True, exist_ok=True)
    pygame.image.save(sheet, str(out))
    print(f"wrote {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", help="network to show (default: the shipped one)")
    parser.add_argument("--out", default=str(Path(__file__).with_name("frames.png")), help="picture to write")
    options = parser.parse_args()
    render(Path(options.out), options.network)
