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
from pathlib import Path

from make_frame_strip import tile_screenshots

TILE = (240, 300)


def render(out: Path, rows: list[tuple[str, str]], first: int, count: int, step: int,
           camera_yaw: float | None, camera_distance: float) -> None:
    camera = ["--camera-distance", str(camera_distance)] + ([] if camera_yaw is None else ["--camera-yaw", str(camera_yaw)])
    frames = [first + column * step for column in range(count)]
    tile_screenshots(out, [[(["--replay", recording, "--frame", str(frame), "--no-debug"] + camera,
                             f"{label}  frame {frame}" if frame == first else f"frame {frame}") for frame in frames]
                           for label, recording in rows], TILE)


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
