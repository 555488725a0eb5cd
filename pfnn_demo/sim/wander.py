"""What the characters other than the player do: wander (seeded) or follow an input script each.

Wandering: walk (sometimes jog) to a random goal on reachable ground, slow down on arrival,
stand a while, pick the next; a goal that makes no progress for a few seconds (a wall in the way)
is dropped for another. Crouch areas are crouched through. Everyone keeps apart: a separation
term pushes each target velocity away from neighbours closer than SEPARATION units.
All of it is arrays over the wandering characters; deterministic for a seed.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from .camera import OrbitCamera
from .controls import Controls, camera_yaw_facing
from .input_script import InputScript
from .input_state import InputState
from .reachable import reachable_mask
from .scene import Scene

GOAL_CLEARANCE = 60.0     # goals and spawn points keep this far from walls and unreachable ground
SPAWN_SPACING = 90.0      # spawn points at least this far apart (where the ground allows)
SEPARATION = 110.0        # neighbours closer than this push each other's target velocity apart
# At 2.4 the shipped network, a few frames slower to turn than its predecessor, let two wanderers
# overlap for 66 frames in the plaza.
SEPARATION_GAIN = 2.7
ARRIVED = 45.0
SLOW_DOWN = 160.0         # the stick eases off within this distance of the goal
STUCK_SECONDS = 3.0
STUCK_PROGRESS = 40.0     # units of progress toward the goal expected every STUCK_SECONDS
JOG_CHANCE = 0.25
FPS = 60


def open_ground(scene: Scene, clearance: float = GOAL_CLEARANCE) -> np.ndarray:
    """(M, 2) world (x, z) of reachable grid points at least `clearance` from walls and edges."""
    heightmap = scene.heightmap
    reachable = reachable_mask(scene)
    cells = int(np.ceil(clearance / heightmap.cell_size))
    inner = ndimage.binary_erosion(reachable, iterations=cells) if cells else reachable
    if not inner.any():
        inner = reachable
    x, z = heightmap.grid_world_xz()
    points = np.stack([x[inner], z[inner]], axis=1)
    if not len(points):
        points = np.array([scene.start], np.float64)
    return points


def spawn_points(scene: Scene, count: int, seed: int = 0, ground: np.ndarray | None = None) -> np.ndarray:
    """(count, 2) start positions: the scene's start first, then random open ground, spaced apart
    as far as the ground allows."""
    rng = np.random.default_rng(seed)
    ground = open_ground(scene) if ground is None else ground
    chosen = [np.asarray(scene.start, np.float64)]
    candidates = ground[rng.permutation(len(ground))]
    spacing = SPAWN_SPACING
    while len(chosen) < count:
        taken = np.array(chosen)
        for point in candidates:
            if len(chosen) == count:
                break
            if np.min(np.hypot(*(taken - point).T)) >= spacing:
                chosen.append(point)
                taken = np.array(chosen)
        spacing *= 0.7   # a crowded scene: accept closer spacing rather than fail
    return np.array(chosen[:count])


def separation(positions: np.ndarray, radius: float = SEPARATION) -> np.ndarray:
    """(N, 2) push away from neighbours within `radius`, growing as they get closer."""
    offset = positions[:, None, :] - positions[None, :, :]
    distance = np.hypot(offset[..., 0], offset[..., 1])
    np.fill_diagonal(distance, np.inf)
    close = distance < radius
    strength = np.where(close, 1.0 - distance / radius, 0.0) / np.where(distance > 1e-6, distance, 1e-6)
    # Two characters on the same spot: separate along a fixed direction rather than not at all.
    offset = np.where((distance <= 1e-6)[..., None], [1.0, 0.0], offset)
    return np.sum(strength[..., None] * offset, axis=1)


class Wander:
    """Seeded wandering for the characters `indices` of a crowd."""

    def __init__(self, scene: Scene, indices: np.ndarray, seed: int = 0, ground: np.ndarray | None = None):
        self.rng = np.random.default_rng(seed)
        self.indices = np.asarray(indices, np.int64)
        self.ground = open_ground(scene) if ground is None else ground
        self.crouches = scene.areas.crouches
        count = len(self.indices)
        self.goal = np.zeros((count, 2))
        self.pace = np.zeros(count)
        self.jog = np.zeros(count, bool)
        self.wait = self.rng.integers(0, 90, count)   # start at staggered times
        self.check_in = np.full(count, STUCK_SECONDS * FPS)
        self.check_distance = np.full(count, np.inf)
        self._new_goals(np.arange(count))

    def _new_goals(self, rows: np.ndarray) -> None:
        if not len(rows):
            return
        self.goal[rows] = self.ground[self.rng.integers(0, len(self.ground), len(rows))]
        self.jog[rows] = self.rng.random(len(rows)) < JOG_CHANCE
        self.pace[rows] = self.rng.uniform(0.55, 1.0, len(rows))
        self.check_in[rows] = STUCK_SECONDS * FPS
        self.check_distance[rows] = np.inf

    def fill(self, controls: Controls, positions_xz: np.ndarray) -> None:
        """Write the wanderers' rows of `controls`, given every character's position (N, 2)."""
        rows = self.indices
        here = positions_xz[rows]
        to_goal = self.goal - here
        distance = np.hypot(to_goal[:, 0], to_goal[:, 1])

        arrived = (distance < ARRIVED) & (self.wait <= 0)
        self.wait[arrived] = self.rng.integers(30, 200, int(arrived.sum()))
        waiting = self.wait > 0
        self.wait[waiting] -= 1
        self._new_goals(np.flatnonzero(waiting & (self.wait == 0)))

        # No progress toward the goal for a while (a wall in the way): choose another.
        self.check_in[~waiting] -= 1
        due = ~waiting & (self.check_in <= 0)
        stuck = due & (distance > self.check_distance - STUCK_PROGRESS)
        self.check_distance[due] = distance[due]
        self.check_in[due] = STUCK_SECONDS * FPS
        self._new_goals(np.flatnonzero(stuck))

        to_goal = self.goal - here
        distance = np.hypot(to_goal[:, 0], to_goal[:, 1])
        heading = to_goal / np.maximum(distance, 1e-6)[:, None]
        pace = np.where(waiting, 0.0, self.pace * np.clip(distance / SLOW_DOWN, 0.35, 1.0))
        wanted = heading * pace[:, None] + SEPARATION_GAIN * separation(positions_xz)[rows]
        length = np.hypot(wanted[:, 0], wanted[:, 1])
        wanted = np.where((length > 1.0)[:, None], wanted / np.maximum(length, 1e-6)[:, None], wanted)
        length = np.minimum(length, 1.0)
        moving = length > 0.35   # below the stick's dead zone the character stands
        controls.move[rows, 0] = 0.0
        controls.move[rows, 1] = np.where(moving, length, 0.0)
        controls.camera_yaw[rows] = np.where(moving, camera_yaw_facing(wanted), controls.camera_yaw[rows])
        controls.jog[rows] = (self.jog & moving & ~waiting).astype(np.float64)
        controls.strafe[rows] = 0.0
        controls.crouch[rows] = self._in_crouch_area(here)
        controls.responsive[rows] = False
        controls.ik[rows] = True

    def _in_crouch_area(self, here: np.ndarray) -> np.ndarray:
        inside = np.zeros(len(here), bool)
        for cx, _cy, cz, size_x, size_z in self.crouches:
            inside |= (np.abs(here[:, 0] - cx) < size_x / 2 + 60) & (np.abs(here[:, 1] - cz) < size_z / 2 + 60)
        return inside


class ScriptedCharacters:
    """Characters that each follow an input script, through a camera of their own."""

    def __init__(self, scripts: dict[int, InputScript]):
        self.scripts = dict(scripts)
        self.cameras = {index: OrbitCamera() for index in self.scripts}

    def fill(self, controls: Controls, frame: int) -> None:
        for index, script in self.scripts.items():
            state: InputState = script.state(frame)
            camera = self.cameras[index]
            if state.camera_yaw is not None:
                camera.yaw = state.camera_yaw
            else:
                camera.update(*InputState.dead_zone(state.look_x, state.look_y), 0.0)
            controls.set_player(index, state, camera.yaw)


class CrowdBehaviour:
    """Inputs for characters 1 ... N-1: scripted where a script is given, wandering otherwise."""

    def __init__(self, scene: Scene, count: int, seed: int = 0, scripts: dict[int, InputScript] | None = None,
                 ground: np.ndarray | None = None):
        scripts = {i: s for i, s in (scripts or {}).items() if 0 < i < count}
        self.scripted = ScriptedCharacters(scripts)
        wanderers = np.array([i for i in range(1, count) if i not in scripts], np.int64)
        self.wander = Wander(scene, wanderers, seed, ground) if len(wanderers) else None
        self.controls = Controls.still(count)
        self.frame = 0

    def next_controls(self, positions_xz: np.ndarray) -> Controls:
        """The next tick's controls (row 0, the player's, is left to the caller)."""
        if self.wander is not None:
            self.wander.fill(self.controls, positions_xz)
        self.scripted.fill(self.controls, self.frame)
        self.frame += 1
        return self.controls
