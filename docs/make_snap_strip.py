"""Render a strip of consecutive frames from recordings, one row each: to look at a snap.

    python docs/make_snap_strip.py OUT.png --row "LABEL=REC.npz" [--row ...] --first K --count N
        [--step S] [--camera-yaw DEG] [--camera-distance D]

Each row shows frames K, K+S, ... of its recording (`pfnn-demo run --headless --record REC.npz`,
or the recordings `pfnn-demo eval --record-dir` writes), rendered offscreen through EGL by
`pfnn-demo screenshot --replay`, so it needs no display. Rows of the same script played by two
versions of the drawing show the same frames side by side.
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

TILE = (240, 300)


def render(out: Path, rows: list[tuple[str, str]], first: int, count: int, step: int,
           camera_yaw: float | None, camera_distance: float) -> None:
    pygame.init()
    font = pygame.font.Font(None, 22)
    sheet = pygame.Surface((TILE[0] * count, TILE[1] * len(rows)))
    with tempfile.TemporaryDirectory() as folder:
        for row, (label, recording) in enumerate(rows):
            for column in range(count):
                frame = first + column * step
                path = Path(folder) / f"{row}_{frame}.png"
                args = ["screenshot", str(path), "--replay", recording, "--frame", str(frame), "--no-hud",
                        "--no-debug", "--size", f"{TILE[0]}x{TILE[1]}", "--camera-distance", str(camera_distance)]
                if camera_yaw is not None:
                    args += ["--camera-yaw", str(camera_yaw)]
                if main(args) != 0:
                    raise SystemExit(f"could not render frame {frame} of {recording}")
                sheet.blit(pygame.image.load(str(path)), (column * TILE[0], row * TILE[1]))
                text = f"{label}  frame {frame}" if column == 0 else f"frame {frame}"
                sheet.blit(font.render(text, True, (255, 255, 255)), (column * TILE[0] + 6, row * TILE[1] + 6))
    out.parent.mkdir(parents=True, exist_ok=True)
    pygame.image.save(sheet, str(out))
    print(f"wrote {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="picture to write")
    parser.add_argument("--row", action="append", required=True, metavar="LABEL=REC.npz",
                        help="a row: its label and the recording it shows (repeat)")
    parser.add_argument("--first", type=int, required=True, help="first frame to show")
    parser.add_argument("--count", type=int, default=6, help="frames per row (default 6)")
    parser.add_argument("--step", type=int, default=1, help="frames between tiles (default 1)")
    parser.add_argument("--camera-yaw", type=float, default=None, help="camera yaw in degrees (default: the recording's)")
    parser.add_argument("--camera-distance", type=float, default=220.0, help="camera distance (default 220)")
    options = parser.parse_args()
    rows = []
    for text in options.row:
        label, _, recording = text.partition("=")
        if not recording:
            parser.error(f"--row {text!r}: expected LABEL=REC.npz")
        rows.append((label, recording))
    render(Path(options.out), rows, options.first, options.count, options.step, options.camera_yaw,
           options.camera_distance)
