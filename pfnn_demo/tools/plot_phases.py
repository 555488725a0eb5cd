"""`pfnn-demo plot-phases`: the phase manifold of clips as a picture, in the manner of the
DeepPhase paper's figures, and a table of how it follows the PFNN's contact phase labels."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import PfnnError
from ..resources import data_dir
from .phase_manifold import PhaseEncoder, PhaseManifold, correspondence, velocity_features

CHANNEL_COLOURS = [(220, 70, 60), (60, 120, 210), (50, 160, 80), (230, 150, 30), (150, 80, 190),
                   (40, 170, 180), (200, 90, 150), (120, 120, 120)]
CLIP_COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
                (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]
DEFAULT_CATEGORIES = ("walk", "run", "start", "stop")   # the longest clip of each, drawn over time
MOVING_SPEED = 30.0        # units/s of the hips over the ground: frames slower than this stand


def default_phases_path() -> Path:
    return data_dir("network") / "phases.npz"


def moving_frames(positions: np.ndarray) -> np.ndarray:
    """(T,) frames where the hips travel faster than MOVING_SPEED over the ground."""
    hips = np.asarray(positions, np.float64)[:, 0, [0, 2]]
    speed = np.linalg.norm(np.gradient(hips, axis=0), axis=1) * 60.0
    return speed > MOVING_SPEED


def compared_frames(clip) -> np.ndarray:
    """(T,) the frames where a clip moves and its contact phase runs (between its first strike and
    its last; the labels hold outside): where the two phases can be compared."""
    running = np.concatenate([[False], np.mod(np.diff(clip.phase), 1.0) > 1e-9])
    return moving_frames(clip.positions) & running


def clip_manifolds(clips: list, encoder: PhaseEncoder) -> dict[str, PhaseManifold]:
    return {clip.name: encoder.encode(velocity_features(clip.positions)) for clip in clips}


def correspondence_table(clips: list, manifolds: dict[str, PhaseManifold]) -> tuple[str, list[dict]]:
    """A row per clip that moves: the strongest channel against the contact phase."""
    rows = []
    for clip in clips:
        if moving_frames(clip.positions).sum() < 60:
            continue
        compared = compared_frames(clip)
        row = correspondence(manifolds[clip.name], clip.phase, compared if compared.any() else moving_frames(clip.positions))
        rows.append({"clip": clip.name, "category": clip.category or "-", **row})
    lines = ["| clip | category | strongest channel | its frequency (Hz) | strides/s from contacts | ratio | "
             "locking | offset (cycles) |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        against = (f"{r['stride frequency']:.2f} | {r['ratio']} | {r['locking']:.2f} | {r['offset']:.2f}"
                   if np.isfinite(r["stride frequency"]) else "- (under a stride) | - | - | -")
        lines.append(f"| {r['clip']} | {r['category']} | {r['channel']} | {r['frequency']:.2f} | {against} |")
    return "\n".join(lines), rows


def choose_clips(clips: list, names: list[str] | None) -> list:
    if names:
        known = {c.name: c for c in clips}
        missing = [n for n in names if n not in known]
        if missing:
            raise PfnnError(f"no clip named {', '.join(missing)} in the data (clips: {', '.join(known)})")
        return [known[n] for n in names]
    chosen = []
    for category in DEFAULT_CATEGORIES:
        match = [c for c in clips if c.category == category]
        if match:
            chosen.append(max(match, key=lambda c: c.frames))
    return chosen or clips[:3]


def plot_phases(data, destination, phases: str | None = None, clip_names: list[str] | None = None) -> str:
    """Draw the picture to `destination`; returns the correspondence table (Markdown)."""
    from .train.pipeline import clips_from_folders

    encoder = PhaseEncoder.load(phases or default_phases_path())
    clips = clips_from_folders(list(data), log=lambda text: None)
    chosen = choose_clips(clips, clip_names)
    manifolds = clip_manifolds(clips, encoder)
    table, _ = correspondence_table(clips, manifolds)
    draw(Path(destination), chosen, clips, manifolds)
    return table


def _projection(vectors: np.ndarray) -> np.ndarray:
    """The manifold's two principal axes (PCA), as the paper projects it."""
    centred = vectors - vectors.mean(axis=0)
    _, _, axes = np.linalg.svd(centred[:: max(1, len(centred) // 20000)], full_matrices=False)
    return centred @ axes[:2].T


def draw(path: Path, chosen: list, clips: list, manifolds: dict[str, PhaseManifold]) -> None:
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    if not pygame.font.get_init():
        pygame.font.init()
    font, small = pygame.font.Font(None, 22), pygame.font.Font(None, 17)
    width, strip, gap = 1500, 70, 8
    panel = 3 * (strip + gap) + 34
    scatter, columns = 560, 4
    legend_rows = -(-len(clips) // columns)
    height = max(len(chosen) * panel + 50, 40 + scatter + 16 * legend_rows + 40)
    surface = pygame.Surface((width, height))
    surface.fill((255, 255, 255))
    channels = next(iter(manifolds.values())).phase.shape[1]
    surface.blit(font.render(f"Phase manifold: {channels} channels, per clip over time (phase with the contact "
                             "phase labels in grey, amplitude, frequency)", True, (0, 0, 0)), (10, 8))
    left, plot_width = 70, 860
    top = 36
    for clip in chosen:
        m = manifolds[clip.name]
        frames = len(m.phase)
        xs = left + np.arange(frames) * plot_width / max(frames - 1, 1)
        surface.blit(font.render(f"{clip.name} ({clip.category or 'clip'}, {frames / 60:.1f} s)", True, (0, 0, 0)),
                     (left, top))
        top += 22
        rows = [("phase", m.phase, 0.0, 1.0), ("amplitude", m.amplitude, 0.0, max(float(m.amplitude.max()), 1e-6)),
                ("frequency Hz", m.frequency, 0.0, max(4.0, float(np.percentile(m.frequency, 99))))]
        for label, values, low, high in rows:
            box = pygame.Rect(left, top, plot_width, strip)
            pygame.draw.rect(surface, (248, 248, 248), box)
            pygame.draw.rect(surface, (180, 180, 180), box, 1)
            surface.blit(small.render(label, True, (60, 60, 60)), (6, top + strip // 2 - 6))
            surface.blit(small.render(f"{high:.2g}", True, (120, 120, 120)), (left - 30, top))
            if label == "phase":
                _polyline(pygame, surface, (170, 170, 170), xs, top + strip * (1 - clip.phase), wrap=True)
            for k in range(values.shape[1]):
                y = top + strip * (1 - (values[:, k] - low) / (high - low))
                _polyline(pygame, surface, CHANNEL_COLOURS[k % len(CHANNEL_COLOURS)], xs, np.clip(y, top, top + strip),
                          wrap=label == "phase")
            top += strip + gap
        for second in range(int(frames / 60) + 1):
            x = left + second * 60 * plot_width / max(frames - 1, 1)
            surface.blit(small.render(f"{second}s", True, (120, 120, 120)), (x - 6, top - gap + 1))
        top += 12
    for k in range(channels):          # channel legend
        pygame.draw.rect(surface, CHANNEL_COLOURS[k % len(CHANNEL_COLOURS)], (left + 90 * k, height - 20, 12, 12))
        surface.blit(small.render(f"channel {k}", True, (0, 0, 0)), (left + 16 + 90 * k, height - 20))

    # The manifold of every clip, projected on its two principal axes, coloured by clip.
    x0, y0 = width - scatter - 20, 40
    surface.blit(font.render("the manifold of all clips (2 principal axes)", True, (0, 0, 0)), (x0, y0 - 26))
    pygame.draw.rect(surface, (180, 180, 180), (x0, y0, scatter, scatter), 1)
    names = [c.name for c in clips]
    points = _projection(np.concatenate([manifolds[n].vectors for n in names]))
    extent = max(float(np.percentile(np.abs(points), 99.5)), 1e-6) * 1.05
    at = 0
    for i, name in enumerate(names):
        count = len(manifolds[name].phase)
        colour = CLIP_COLOURS[i % len(CLIP_COLOURS)]
        for px, py in points[at:at + count:2]:
            x = x0 + scatter / 2 * (1 + px / extent)
            y = y0 + scatter / 2 * (1 - py / extent)
            if x0 < x < x0 + scatter and y0 < y < y0 + scatter:
                surface.fill(colour, (int(x), int(y), 2, 2))
        at += count
    for i, name in enumerate(names):
        cx = x0 + (i % columns) * (scatter // columns)
        cy = y0 + scatter + 8 + (i // columns) * 16
        pygame.draw.rect(surface, CLIP_COLOURS[i % len(CLIP_COLOURS)], (cx, cy + 2, 10, 10))
        surface.blit(small.render(name, True, (0, 0, 0)), (cx + 14, cy))
    path.parent.mkdir(parents=True, exist_ok=True)
    pygame.image.save(surface, str(path))


def _polyline(pygame, surface, colour, xs: np.ndarray, ys: np.ndarray, wrap: bool = False) -> None:
    """A line through the points, broken where a phase wraps from 1 to 0."""
    breaks = np.nonzero(np.abs(np.diff(ys)) > 0.5 * (ys.max() - ys.min() + 1e-9))[0] + 1 if wrap else []
    for part in np.split(np.arange(len(xs)), breaks):
        if len(part) > 1:
            pygame.draw.lines(surface, colour, False, list(zip(xs[part].tolist(), ys[part].tolist())), 1)
