"""Render docs/footstep_ground.png: CMU 03_03 (a walk over uneven ground whose floor was not
recorded) on the ground the trainer recovers from its footsteps.

    python docs/make_footstep_ground.py [--clip data/cmu-amc/03_03.amc] [--seconds 8] [--out PNG]

Top: the recovered heightfield seen from above (dark low, light high) with the path and every
planted heel and toe. Bottom: a side view unrolled along the path, the ground's profile under the
feet and the body every 0.4 s, planted heels and toes marked: they land on the ground, neither
floating nor sinking. Drawn with pygame; no display needed.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402

from pfnn_demo.sim.skeleton import PARENTS  # noqa: E402
from pfnn_demo.tools.train.pipeline import apply_category, load_motion  # noqa: E402
from pfnn_demo.tools.train.database import clip_from_motion  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
WIDTH, SIDE_HEIGHT, TOP_HEIGHT = 1200, 430, 330
FEET = {4: "heel", 5: "toe", 9: "heel", 10: "toe"}
FIGURE_EVERY = 24          # frames at 60 fps between drawn bodies


def hilliest_window(clip, frames: int) -> int:
    """First frame of the window whose hips rise and fall the most."""
    hips = clip.ground(clip.positions[:, 0, 0], clip.positions[:, 0, 2])
    spans = [np.ptp(hips[k:k + frames]) for k in range(0, clip.frames - frames, 30)]
    return int(np.argmax(spans)) * 30


def render(clip_path: Path, seconds: float, out: Path) -> None:
    clip = clip_from_motion(load_motion(clip_path), clip_path.stem, align_rest=True)
    apply_category(clip, "uneven")
    frames = int(seconds * 60)
    start = hilliest_window(clip, frames)
    window = slice(start, start + frames)
    joints = clip.positions[window].astype(np.float64)
    contacts = clip.contacts[window] > 0.5
    root = joints[:, 0, [0, 2]]
    step = np.linalg.norm(np.diff(root, axis=0), axis=1)
    along = np.concatenate([[0.0], np.cumsum(step)])
    tangent = np.gradient(root, axis=0)
    tangent /= np.maximum(np.linalg.norm(tangent, axis=1, keepdims=True), 1e-9)

    pygame.init()
    font = pygame.font.Font(None, 22)
    sheet = pygame.Surface((WIDTH, TOP_HEIGHT + SIDE_HEIGHT))
    sheet.fill((250, 250, 246))

    # Top view: the heightfield around the path, shaded by height.
    points = np.concatenate([joints[:, 0, [0, 2]], joints[:, [4, 5, 9, 10]][contacts][:, [0, 2]]])
    low, high = points.min(axis=0) - 40, points.max(axis=0) + 40
    scale = min((WIDTH - 40) / (high[0] - low[0]), (TOP_HEIGHT - 40) / (high[1] - low[1]))
    margin = np.array([(WIDTH - (high[0] - low[0]) * scale) / 2, 20.0])
    gx, gz = np.meshgrid(np.arange(WIDTH), np.arange(TOP_HEIGHT), indexing="ij")
    x = low[0] + (gx - margin[0]) / scale
    z = low[1] + (gz - margin[1]) / scale
    heights = clip.ground(x, z)
    band = np.percentile(heights, [2, 98])
    shade = np.clip((heights - band[0]) / max(band[1] - band[0], 1e-6), 0, 1)
    pixels = np.stack([90 + 150 * shade, 80 + 140 * shade, 60 + 110 * shade], axis=-1).astype(np.uint8)
    sheet.blit(pygame.surfarray.make_surface(pixels), (0, 0))

    def top(p):
        return int(margin[0] + (p[0] - low[0]) * scale), int(margin[1] + (p[1] - low[1]) * scale)

    pygame.draw.lines(sheet, (30, 60, 160), False, [top(p) for p in root], 2)
    for column, joint in enumerate(FEET):
        for p in joints[contacts[:, column], joint][::4]:
            pygame.draw.circle(sheet, (200, 40, 40) if FEET[joint] == "toe" else (240, 150, 40), top(p[[0, 2]]), 2)
    sheet.blit(font.render(f"{clip_path.stem}: ground recovered from the footsteps, {seconds:.0f} s from "
                           f"{start / 60:.1f} s (light high, dark low; {band[1] - band[0]:.0f} units between)",
                           True, (255, 255, 255)), (10, 6))

    # Side view unrolled along the path: ground profile and bodies.
    def unrolled(p, frame):
        offset = (p[..., [0, 2]] - root[frame]) @ tangent[frame]
        return along[frame] + offset, p[..., 1]

    profile_s = along
    profile_h = clip.ground(root[:, 0], root[:, 1])
    top_h = max(joints[..., 1].max(), profile_h.max()) + 10
    bottom_h = profile_h.min() - 25
    side_scale = min((WIDTH - 40) / (along[-1] + 60), (SIDE_HEIGHT - 40) / (top_h - bottom_h))

    def side(s, h):
        return int(30 + s * side_scale), int(TOP_HEIGHT + 30 + (top_h - h) * side_scale)

    ground_line = [side(s, h) for s, h in zip(profile_s, profile_h)]
    pygame.draw.polygon(sheet, (196, 176, 140), ground_line + [side(profile_s[-1], bottom_h), side(0, bottom_h)])
    pygame.draw.lines(sheet, (120, 90, 50), False, ground_line, 2)
    for frame in range(0, frames, FIGURE_EVERY):
        s, h = unrolled(joints[frame], frame)
        shade = 60 + int(120 * frame / frames)
        for joint, parent in enumerate(PARENTS):
            if parent >= 0:
                pygame.draw.line(sheet, (shade, shade, 200), side(s[parent], h[parent]), side(s[joint], h[joint]), 2)
    for column, joint in enumerate(FEET):
        for frame in np.flatnonzero(contacts[:, column])[::3]:
            s, h = unrolled(joints[frame, joint], frame)
            pygame.draw.circle(sheet, (200, 40, 40) if FEET[joint] == "toe" else (240, 150, 40), side(s, h), 2)
    sheet.blit(font.render("side view along the path: the ground under the hips (brown), the body every 0.4 s, "
                           "planted toes (red) and heels (orange)", True, (0, 0, 0)), (10, TOP_HEIGHT + 6))
    out.parent.mkdir(parents=True, exist_ok=True)
    pygame.image.save(sheet, str(out))
    print(f"wrote {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clip", type=Path, default=ROOT / "data" / "cmu-amc" / "03_03.amc")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "footstep_ground.png")
    args = parser.parse_args()
    render(args.clip, args.seconds, args.out)
