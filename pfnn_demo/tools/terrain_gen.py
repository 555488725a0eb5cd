"""Seeded, deterministic terrain authoring: heightmaps and the areas that belong with them.

Every generator takes a numpy Generator and keyword parameters (documented on each function,
listed by `pfnn-demo make-terrain --help`) and returns a `Generated`: heights in world units on a
grid of `cell` units, walls, jump areas, crouch areas and a start position. Heights stay within
the walkability limits of `walkability.py` wherever the character can go; walls fence off what
it cannot (cliffs, buildings).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import ndimage

from ..sim.terrain import ORIGINAL_CELL_SIZE, grid_world_xz

WALL_WIDTH = 20.0


@dataclasses.dataclass
class Generated:
    heights: np.ndarray
    cell: float = ORIGINAL_CELL_SIZE
    walls: list = dataclasses.field(default_factory=list)
    jump_areas: list = dataclasses.field(default_factory=list)
    crouch_areas: list = dataclasses.field(default_factory=list)
    start: tuple[float, float] = (0.0, 0.0)

    def world_xz(self) -> tuple[np.ndarray, np.ndarray]:
        """World x and z of every grid vertex (the runtime's centring, original-demo.md: Heightmaps)."""
        return grid_world_xz(self.heights.shape, self.cell)

    def extent(self) -> float:
        """Half-size of the square the grid covers."""
        return (min(self.heights.shape) // 2 - 2) * self.cell


def fractal_noise(shape: tuple[int, int], rng: np.random.Generator, wavelength_cells: float,
                  octaves: int = 4, persistence: float = 0.5) -> np.ndarray:
    """Smooth value noise in about [-1, 1]: random lattices upsampled with cubic splines, summed."""
    total = np.zeros(shape)
    amplitude, norm = 1.0, 0.0
    for octave in range(octaves):
        spacing = max(wavelength_cells / 2 ** octave, 2.0)
        lattice = rng.uniform(-1, 1, (int(shape[0] / spacing) + 4, int(shape[1] / spacing) + 4))
        zoomed = ndimage.zoom(lattice, spacing, order=3, mode="reflect")
        total += amplitude * zoomed[:shape[0], :shape[1]]
        norm += amplitude
        amplitude *= persistence
    return total / norm


def boundary_walls(half: float) -> list:
    corners = [(half, -half), (half, half), (-half, half), (-half, -half)]
    return [[*corners[i], *corners[(i + 1) % 4], WALL_WIDTH] for i in range(4)]


def _polyline_walls(points: np.ndarray) -> list:
    return [[float(a[0]), float(a[1]), float(b[0]), float(b[1]), WALL_WIDTH] for a, b in zip(points[:-1], points[1:])]


def hills(rng: np.random.Generator, size: int = 400, amplitude: float = 180.0, wavelength: float = 800.0) -> Generated:
    """Rolling hills: smooth fractal noise. amplitude: peak height (units); wavelength: hill spacing (units)."""
    g = Generated(np.zeros((size, size)))
    noise = fractal_noise((size, size), rng, wavelength / g.cell, octaves=3, persistence=0.35)
    g.heights = amplitude * noise
    g.walls = boundary_walls(g.extent() - 25)
    return g


def rocky(rng: np.random.Generator, size: int = 360, amplitude: float = 11.0, roughness: float = 0.45) -> Generated:
    """Rough, rocky ground: fine fractal noise on gentle swells. amplitude: bump height (units);
    roughness: share of the small-scale octaves (0 smooth ... 1 rough)."""
    g = Generated(np.zeros((size, size)))
    swell = fractal_noise((size, size), rng, 400 / g.cell, octaves=2)
    rocks = fractal_noise((size, size), rng, 60 / g.cell, octaves=4, persistence=roughness)
    g.heights = 40.0 * swell + amplitude * rocks
    g.walls = boundary_walls(g.extent() - 25)
    return g


def terraces(rng: np.random.Generator, size: int = 360, step: float = 12.0, levels: int = 8,
             ramp: float = 40.0) -> Generated:
    """Terraced slopes: a smooth field cut into flat levels joined by short ramps. step: height of
    one level (units); levels: how many; ramp: horizontal length of each riser (units)."""
    g = Generated(np.zeros((size, size)))
    field = fractal_noise((size, size), rng, 900 / g.cell, octaves=2, persistence=0.3)
    field = (field - field.min()) / (np.ptp(field) + 1e-9) * levels
    # Each level is flat; the riser between two levels is a smoothstep over `ramp` units.
    gradient = np.hypot(*np.gradient(field, g.cell)) + 1e-6
    fraction = field - np.floor(field)
    half_width = ramp / 2 * gradient      # the riser's half-length, in level units
    t = np.clip((fraction - (1 - half_width)) / (2 * half_width), 0, 1)
    rise = t * t * (3 - 2 * t)
    g.heights = step * (np.floor(field) + rise)
    g.heights -= g.heights.mean()
    g.walls = boundary_walls(g.extent() - 25)
    return g


def canyon(rng: np.random.Generator, size: int = 520, width: float = 380.0, depth: float = 220.0,
           meander: float = 300.0) -> Generated:
    """A winding canyon trail along X between rock walls. width: trail width (units); depth: cliff
    height (units); meander: sideways swing of the trail (units)."""
    g = Generated(np.zeros((size, size)))
    x, z = g.world_xz()
    half = g.extent() - 25
    phase = rng.uniform(0, 2 * np.pi)

    def centre(xs):
        return meander * np.sin(xs / 700.0 + phase) * 0.6 + meander * 0.4 * np.sin(xs / 260.0 + 2 * phase)

    offset = np.abs(z - centre(x))
    floor = 10.0 * fractal_noise((size, size), rng, 120 / g.cell, octaves=3)
    rock = depth * np.clip((offset - width / 2) / 120.0, 0, 1) ** 0.8
    rock += 25.0 * fractal_noise((size, size), rng, 80 / g.cell, octaves=3) * (offset > width / 2)
    g.heights = floor + rock
    # Walls along both rims, a little inside the trail so the cliff foot is never reached.
    xs = np.linspace(-half, half, 60)
    for side in (-1, 1):
        rim = np.stack([xs, centre(xs) + side * (width / 2 - 10)], axis=1)
        g.walls += _polyline_walls(rim)
    g.walls += [[-half, float(centre(-half) - width), -half, float(centre(-half) + width), WALL_WIDTH],
                [half, float(centre(half) - width), half, float(centre(half) + width), WALL_WIDTH]]
    g.start = (0.0, float(centre(0.0)))
    return g


def jump_course(rng: np.random.Generator, size: int = 500, obstacles: int = 14, height: float = 22.0) -> Generated:
    """Flat ground with low rounded bars to jump over, a jump area at each. obstacles: how many;
    height: bar height (units)."""
    g = Generated(np.zeros((size, size)))
    x, z = g.world_xz()
    half = g.extent() - 25
    placed = []
    while len(placed) < obstacles:
        px, pz = rng.uniform(-half + 150, half - 150, 2)
        if np.hypot(px, pz) < 200 or any(np.hypot(px - qx, pz - qz) < 260 for qx, qz in placed):
            continue
        placed.append((px, pz))
        angle = rng.uniform(0, np.pi)
        along = (x - px) * np.cos(angle) + (z - pz) * np.sin(angle)
        across = -(x - px) * np.sin(angle) + (z - pz) * np.cos(angle)
        # A bar 120 long and 30 deep with rounded (cosine) sides.
        inside = np.clip(1 - np.maximum(np.abs(along) / 60.0, 0), 0, 1) > 0
        profile = np.where(np.abs(across) < 15, 0.5 * (1 + np.cos(np.pi * across / 15)), 0)
        g.heights = np.maximum(g.heights, height * profile * inside)
        g.jump_areas.append([float(px), 5.0, float(pz), 75.0, 100.0])
    g.walls = boundary_walls(half)
    return g


def urban(rng: np.random.Generator, size: int = 600, block: float = 230.0, street: float = 150.0,
          building_height: float = 140.0) -> Generated:
    """City blocks: flat streets and squares between buildings, each building fenced by walls.
    block: building footprint (units); street: street width (units); building_height (units)."""
    g = Generated(np.zeros((size, size)))
    x, z = g.world_xz()
    half = g.extent() - 25
    pitch = block + street
    count = int((2 * half - street) // pitch)
    origin = -count * pitch / 2 + street / 2
    g.start = (origin + (count // 2) * pitch - street / 2, 0.0)     # in the middle of a street
    for i in range(count):
        for j in range(count):
            if rng.random() < 0.25:      # an open square instead of a building
                continue
            x0, z0 = origin + i * pitch, origin + j * pitch
            w, d = block * rng.uniform(0.6, 1.0), block * rng.uniform(0.6, 1.0)
            x1, z1 = x0 + w, z0 + d
            if x0 - 60 < g.start[0] < x1 + 60 and z0 - 60 < g.start[1] < z1 + 60:
                continue                 # keep the start free
            footprint = (x >= x0) & (x <= x1) & (z >= z0) & (z <= z1)
            g.heights[footprint] = building_height * rng.uniform(0.7, 1.3)
            corners = [(x0, z0), (x1, z0), (x1, z1), (x0, z1)]
            g.walls += [[*corners[k], *corners[(k + 1) % 4], WALL_WIDTH] for k in range(4)]
    g.walls += boundary_walls(half)
    return g


GENERATORS = {"hills": hills, "rocky": rocky, "terraces": terraces, "canyon": canyon,
              "jump_course": jump_course, "urban": urban}


def write_scene(generated: Generated, folder, name: str, display_name: str, description: str = "",
                order: int = 100, recipe: dict | None = None):
    """Write NAME.npz (heightmap) and NAME.json (scene) into `folder`; returns the scene file's path."""
    import json
    from pathlib import Path

    from ..sim.terrain import Heightmap

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    Heightmap(generated.heights.astype(np.float32), generated.cell, name=name).save(folder / f"{name}.npz")
    spec = {
        "name": name, "order": order, "display_name": display_name, "description": description,
        "heightmap": f"{name}.npz", "start": [round(float(v), 2) for v in generated.start],
        "walls": [[round(float(v), 2) for v in wall] for wall in generated.walls],
        "jump_areas": [[round(float(v), 2) for v in area] for area in generated.jump_areas],
        "crouch_areas": [[round(float(v), 2) for v in area] for area in generated.crouch_areas],
        "generated_by": recipe or {},
    }
    path = folder / f"{name}.json"
    text = json.dumps(spec, indent=1)
    path.write_text(text + "\n", encoding="utf-8")
    return path
