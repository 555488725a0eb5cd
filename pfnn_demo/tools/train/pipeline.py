"""`pfnn-demo train`: clips in a folder to an exported network, with progress and validation."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...errors import PfnnError
from ...motion.acclaim import load_amc
from ...motion.bvh import read_bvh
from ...motion.deepmimic import load_deepmimic
from . import labels
from .database import FPS, clip_from_motion, clip_windows, extended_root, facing_yaw, mirror_clip, normalisation
from .synthesis import (TURN_RATES, RollingGround, at_speed, bend, crouch, loop_cycles, on_terrain, over_a_bar,
                        running_jump, side_step, hold_standing, one_shot_variations, plant_feet, reversals,
                        ground_feet,
                        setting_off_frames, speed_changes, stops, time_warp, transition, TURNING_START_ANGLES,
                        turning_start, turns_on_the_move, variations, WallsBeside)
from ...sim.deepphase import output_groups
from ...sim.mann import DEFAULT_GATE_EASE
from ...sim.networks import file_md5, read_network_weights
from .manifold_windows import clip_manifold, manifold_windows
from .trainer import CHOSEN_RUNS, _progress, _torch, export, keep_initial, recipe, train
from .window_cache import cached_windows, check_folder, window_key

CMU_ACKNOWLEDGEMENT = ("The data used in this project was obtained from mocap.cs.cmu.edu. "
                       "The database was created with funding from NSF EIA-0196217.")


DEEPMIMIC_ACKNOWLEDGEMENT = ("DeepMimic motion data (Peng et al. 2018) as shipped with the Bullet Physics "
                             "SDK's pybullet under the zlib licence.")
# A looping DeepMimic cycle is played this long before labelling, so that it holds whole cycles.
DEEPMIMIC_SECONDS = 8.0


MANIFEST = "clips.json"


def motion_files(folder: Path) -> list[Path]:
    """BVH clips, CMU ASF/AMC clips (.amc, with their subject's .asf beside them) and DeepMimic
    motions (.txt or .json) in a folder and its subfolders, sorted."""
    return sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix.lower() in MOTION_SUFFIXES
                  and f.name.lower() not in ("license.txt", "readme.txt", MANIFEST))


MOTION_SUFFIXES = (".bvh", ".amc", ".txt", ".json")


def load_motion(file: Path):
    """A clip in the 31-joint CMU hierarchy (BVH, ASF/AMC) or on the canonical skeleton (DeepMimic)."""
    suffix = file.suffix.lower()
    if suffix == ".bvh":
        return read_bvh(file)
    if suffix == ".amc":
        return load_amc(file)
    return load_deepmimic(file, DEEPMIMIC_SECONDS)


# ASF/AMC clips are on their subject's own rest pose: retargeted with the bones aligned to the
# canonical rest directions (database.rest_aligned). BVH clips keep the shipped recipe.
ALIGN_REST = {".amc": True}


def manifest(folder: Path) -> dict[str, dict]:
    """{file name: {"category": ..., "use": "cycle" | "one-shot"}} from a folder's clips.json."""
    path = folder / MANIFEST
    if not path.is_file():
        return {}
    try:
        entries = json.loads(path.read_text())["clips"]
    except (ValueError, KeyError, TypeError) as error:
        raise PfnnError(f"not a clip manifest ({error})", path) from None
    for name, entry in entries.items():
        if not isinstance(entry, dict) or entry.get("use", "cycle") not in USES:
            raise PfnnError(f"{name}: 'use' must be one of {', '.join(USES)}", path)
    return entries


# "skip": kept beside the others but not trained on (e.g. a take that is there twice).
USES = ("cycle", "one-shot", "skip")


NO_JUMP = np.array([1.0, 1.0, 1.0, 1.0, 0.0, 1.0], np.float32)


def apply_category(clip, category: str) -> None:
    """Labels that the clip's category knows better than automatic labelling (in place): a
    sneak is crouched throughout, a jump clip holds one jump around its longest flight, a jumps
    clip jumps at every flight and walks where it steps between them, stairs climb their own
    ground, a walk over uneven ground stands on the ground recovered from its footsteps (its
    contacts measured from it), and no other captured clip jumps (a missed contact is not a
    flight)."""
    clip.category = category
    if not category:
        return
    if category == "crouch":
        clip.gaits[:] = np.array([0, 0, 0, 1, 0, 0], np.float32)
        return
    if category == "uneven":
        relabel_on_footsteps(clip)
    gaits = clip.gaits * NO_JUMP
    if category == "jumps":
        # Between its jumps the subject shuffles and turns on the spot, the root nearly still:
        # labelled standing, those steps taught the network to shuffle once the stick is
        # released. Standing keeps both feet down; a lifted foot walks.
        moved = gaits[:, 0] * labels.stepping(clip.contacts, FPS)
        gaits[:, 0] -= moved
        gaits[:, 1] += moved
    if category in ("jump", "jumps"):
        find = labels.jump_weights if category == "jump" else labels.jumps_weights
        weight = find(clip.contacts > 0.5, FPS)[:, None]
        gaits = (1 - weight) * gaits + weight * np.array([0, 0, 0, 0, 1, 0], np.float32)
    total = gaits.sum(axis=1, keepdims=True)
    clip.gaits = (gaits / np.where(total > 0, total, 1)).astype(np.float32)
    if category == "stairs":
        clip.ground = labels.contact_ground(clip.positions, clip.contacts)


def relabel_on_footsteps(clip) -> None:
    """A walk over unrecorded uneven ground (in place): the ground recovered from its footsteps,
    and the contacts, phase and gaits labelled again against it (contacts found against the
    clip's lowest level miss every step on higher ground)."""
    ground = labels.footstep_ground(clip.positions, labels.foot_contacts(clip.positions, FPS, by_height=False))
    contacts = labels.foot_contacts(clip.positions, FPS, ground)
    ground = labels.footstep_ground(clip.positions, contacts)
    contacts = labels.foot_contacts(clip.positions, FPS, ground)
    clip.ground = ground
    clip.contacts = contacts.astype(np.float32)
    clip.phase = labels.phase_from_strikes(labels.foot_strikes(contacts, FPS), clip.frames, FPS)
    clip.gaits = labels.gait_weights(clip.positions, contacts, FPS).astype(np.float32)


def load_clips(folder: Path, log=print, grounded: bool = False, leave_out=()) -> list:
    """The labelled clips of `folder`, but those its manifest skips or `leave_out` names (file
    names, with or without their extension); with `grounded`, every planted foot stood on its
    ground (`stood_on_ground`)."""
    files = motion_files(folder)
    if not files:
        raise PfnnError("no motion clips (.bvh, .amc, or DeepMimic .txt/.json) in the data folder", folder)
    clips, manifests = [], {}
    for file in files:
        if file.parent not in manifests:
            manifests[file.parent] = manifest(file.parent)
        entry = manifests[file.parent].get(file.name, {})
        if entry.get("use") == "skip" or clip_names(file) & set(leave_out):
            continue
        try:
            clip = clip_from_motion(load_motion(file), file.stem, align_rest=ALIGN_REST.get(file.suffix.lower(), False))
        except ValueError as error:
            raise PfnnError(str(error), file) from None
        clip.source = "deepmimic" if file.suffix.lower() in (".txt", ".json") else "cmu"
        clip.one_shot = entry.get("use") == "one-shot"
        clip.validation = bool(entry.get("validation", False))
        apply_category(clip, entry.get("category", ""))
        if grounded:
            clip = stood_on_ground(clip)
        clips.append(clip)
        log(f"  {file.relative_to(folder)}: {clip.frames} frames at 60 fps, "
            f"{'one-shot' if clip.one_shot else 'cycle'}{', ' + clip.category if clip.category else ''}, "
            f"gait {np.round(clip.gaits.mean(axis=0), 2).tolist()}")
    return clips


LOOP_SECONDS = 12.0
STOPS_PER_CLIP = 4
CROUCH_DEPTH = (24.0, 34.0)      # units the pelvis is lowered in a crouched walk
CROUCH_LEAN = (0.25, 0.5)        # radians the upper body bends forward
SIDE_STEP_ANGLES = np.radians([90.0, -90.0, 45.0, -45.0, 135.0, -135.0, 180.0])
SIDE_STEP_TURNS = (0.0, 0.6, -0.6)   # radians per second: each side-step straight and curving either way
SYNTHESIS_SEED = 7


WALK_CATEGORIES = ("", "walk", "walk-fast", "walk-slow")   # "" = no manifest (e.g. DeepMimic)
STANDING_SECONDS = 4.0       # captured standing played back and forth at the ends of starts and stops


def extended(clips: list, seed: int = SYNTHESIS_SEED, jumps: bool = True, jog_sides: str | None = None,
             moving_turns: int = 0, pivot_reversals: bool = False) -> list:
    """Every clip, plus:
      - gait cycles: the first whole cycle looped for LOOP_SECONDS at several speeds and turning
        at several rates (synthesis.variations); for forward walks also stops into standing and
        starts from it (synthesis.stops), a crouched walk (synthesis.crouch) and side-steps and
        backward steps in two random directions (synthesis.side_step); walks and jogs changing
        into each other (gait_changes);
      - one-shot clips (starts, stops, jumps, turns, stairs): their captured standing carried on
        (synthesis.hold_standing), and retimed and gently curved (synthesis.one_shot_variations);
      - strafing that changes direction, from each forward walk (strafe_changes);
      - setting off from standing towards the side or back, turning on the way (turning_starts),
        and walks and jogs changing direction by 90 to 180 degrees (direction_reversals; with
        `pivot_reversals` the body turns as the walk slows, synthesis.reversals' pivot);
      - once more, from every direction into the forward step at the slowest walking speed
        (back_to_forward);
      - with `jumps`, the captured jumps over a bar, from standing and at walking and jogging pace
        (jumps_over_bars);
      - with `jog_sides` ("any" or "sideways", JOG_SIDE_WAYS), jogging off the facing, the body
        still facing ahead (jog_side_steps);
      - with `moving_turns`, that many turns by 90 to 180 degrees taken without slowing down from
        every forward walk, crouched walk and jog (synthesis.turns_on_the_move).
    Seeded: the same clips give the same motion."""
    rng = np.random.default_rng(seed)
    out = []
    cycles = [c for c in clips if not c.one_shot]
    loops = [loop_cycles(clip, LOOP_SECONDS) for clip in cycles]
    forward_walk = [c.category in WALK_CATEGORIES for c in cycles]
    walks = [c for c, forward in zip(loops, forward_walk) if c is not None and forward and c.gaits[:, 1].mean() > 0.5]
    jogs = [c for c in loops if c is not None and c.gaits[:, 2].mean() > 0.5]
    for walk in walks:
        for jog in rng.permutation(len(jogs))[:JOGS_PER_WALK]:
            out += gait_changes(walk, jogs[jog], rng)
    crouched = []
    for clip, looped, forward in zip(cycles, loops, forward_walk):
        out.append(clip)
        if looped is None:
            continue
        out += variations(looped)
        if forward and looped.gaits[:, 1].mean() > 0.5:
            out += stops(looped, rng, STOPS_PER_CLIP)
            crouched.append(crouch(looped, rng.uniform(*CROUCH_DEPTH), rng.uniform(*CROUCH_LEAN)))
            out += variations(crouched[-1], turn_rates=TURN_RATES[:5])
            for angle in rng.choice(SIDE_STEP_ANGLES, 2, replace=False):
                out += [bend(time_warp(side_step(looped, angle), rate), turn)
                        for rate in (1.0, 1.35) for turn in SIDE_STEP_TURNS]
    for clip in clips:
        if clip.one_shot:
            out += one_shot_variations(hold_standing(clip, STANDING_SECONDS))
    for walk in walks:
        out += strafe_changes(walk, rng)
    out += turning_starts(out, np.random.default_rng(seed + 2))
    out += direction_reversals(walks, jogs, np.random.default_rng(seed + 3), pivot_reversals)
    recovery_rng = np.random.default_rng(seed + 4)
    for walk in walks:
        out += back_to_forward(walk, recovery_rng)
    slow_rng = np.random.default_rng(seed + 6)
    for walk in walks:
        out += back_to_forward(walk, slow_rng, slowest=True)
    if jumps:
        captured = [c for c in clips if c.one_shot and c.category == "jump"]
        out += jumps_over_bars(walks, jogs, captured, np.random.default_rng(seed + 5))
    if jog_sides:
        out += jog_side_steps(jogs, np.random.default_rng(seed + 7), jog_sides)
    if moving_turns:
        turn_rng = np.random.default_rng(seed + 8)
        for moving in walks + crouched + jogs:
            out += turns_on_the_move(moving, turn_rng, moving_turns)
    return out


JOG_SIDE_STEPS = 3   # directions per jog cycle (few jog cycles are captured)


class JogSides(NamedTuple):
    angles: np.ndarray    # side-step angles to draw from
    count: int            # drawn per jog
    provenance: str       # what the network's provenance says of them


# The ways `jog_side_steps` turns the jogs: "any", JOG_SIDE_STEPS of the side-step angles drawn at
# random per jog; "sideways", left and right only.
JOG_SIDE_WAYS = {"any": JogSides(SIDE_STEP_ANGLES, JOG_SIDE_STEPS, "with jogs turned sideways, "),
                 "sideways": JogSides(SIDE_STEP_ANGLES[:2], 2, "with jogs turned to either side, ")}


def jog_side_steps(jogs: list, rng: np.random.Generator, ways: str = "any") -> list:
    """Each looped jog turned into jogging off its facing (synthesis.side_step) the `ways` of
    JOG_SIDE_WAYS, straight and curving. A strafing jog, or a jog that a wall deflects while the
    stick still points into it, runs off its facing: learned from walks' side-steps alone, the
    network ran it in short quick steps, 1.5 cycles a second where it jogs ahead at 1.1, and
    shook 1.6x as much as the original network."""
    angles, count, _ = JOG_SIDE_WAYS[ways]
    out = []
    for jog in jogs:
        for angle in rng.choice(angles, count, replace=False):
            out += [bend(side_step(jog, angle), turn) for turn in SIDE_STEP_TURNS]
    return out


BAR_HEIGHTS = (14.0, 24.0)       # units: the jump course's bars are about 21 high
BAR_HALF_WIDTHS = (12.0, 20.0)   # units: and about 30 wide at their foot
# Running jumps from the slowest jog speed only: from every jog speed the network jogged over the
# bars as fast as anywhere and shook 1.37x as much as the original there; from the two slowest
# it slowed for a bar (1.27x-1.34x in two trainings), from the slowest alone more (1.23x).
RUNNING_JUMP_JOGS = 1
# Each jump over this many bars of random heights and widths: with one bar per jump from the
# slowest jog alone, the network's feet skimmed the course's bars (0.1 units above one).
BARS_PER_JUMP = 2


def jumps_over_bars(walks: list, jogs: list, jumps: list, rng: np.random.Generator) -> list:
    """Every captured jump taken over a bar (synthesis.over_a_bar), BARS_PER_JUMP times, each
    time a bar of another height and width: from standing, as captured, and from every jog at its
    RUNNING_JUMP_JOGS slowest speeds and from every walk at its two fastest (synthesis.running_jump),
    as in the jump course, where the stick keeps pushing on over the bars."""
    out = []
    runs = [at_speed(jog, *change) for jog in jogs for change in speed_changes(jog)[:RUNNING_JUMP_JOGS]]
    runs += [at_speed(walk, *change) for walk in walks for change in speed_changes(walk)[-2:]]
    for jump in jumps:
        for version in [jump] + [running_jump(run, jump) for run in runs]:
            if version is None:
                continue
            planted = plant_feet(version)
            for _ in range(BARS_PER_JUMP):
                barred = over_a_bar(planted, rng.uniform(*BAR_HEIGHTS), rng.uniform(*BAR_HALF_WIDTHS))
                if barred is not None:
                    out.append(barred)
    return out


def back_to_forward(walk, rng: np.random.Generator, slowest: bool = False) -> list:
    """Side-steps and backward steps changing into the forward step (as strafe_changes) once more
    from every other direction, at a random walking speed (or the slowest, with `slowest`): the
    way out of stepping away from the facing when the trajectory asks for walking ahead. At the
    slowest speed too: a network set off at a slow walk towards a goal at its side turned to face
    it and then side-stepped away for 10 s."""
    speeds = speed_changes(walk)
    out = []
    for angle in STRAFE_ANGLES[1:]:
        paced = at_speed(walk, *speeds[0 if slowest else rng.integers(len(speeds))])
        name = f"{paced.name}_strafe{np.degrees(angle):+.0f}to+0"
        out.append(transition(side_step(paced, angle), side_step(paced, 0.0), 1.5, rng.uniform(0.3, 0.7), 2.5,
                              name=name))
    return out


REVERSALS_PER_WALK = 3


def direction_reversals(walks: list, jogs: list, rng: np.random.Generator, pivot: bool = False) -> list:
    """From every forward walk, REVERSALS_PER_WALK changes of direction (synthesis.reversals, their
    `pivot`) at a random walking speed, and one from a jog slowing into that walk."""
    out = []
    for walk in walks:
        walk_speeds = speed_changes(walk)
        slower = at_speed(walk, *walk_speeds[rng.integers(len(walk_speeds))])
        out += reversals(slower, rng, REVERSALS_PER_WALK, pivot=pivot)
        if jogs:
            jog = jogs[rng.integers(len(jogs))]
            jog_speeds = speed_changes(jog)
            down = transition(at_speed(jog, *jog_speeds[rng.integers(len(jog_speeds))]), slower, 2.0,
                              rng.uniform(0.5, 1.0), 5.0)
            out += reversals(down, rng, 1, after=3.2, pivot=pivot)
    return out


TURNING_STARTS_PER_ONSET = 2


def turning_starts(clips: list, rng: np.random.Generator, count: int = TURNING_STARTS_PER_ONSET) -> list:
    """For every start from standing among the synthesised stops and the captured starts
    (synthesis.turning_start), `count` more that set off towards random directions away from
    the facing, the body turning on the way."""
    out = []
    for clip in clips:
        if clip.category not in ("start", "stop-and-go"):
            continue
        for onset in setting_off_frames(clip):
            for angle in rng.choice(TURNING_START_ANGLES, count, replace=False):
                out.append(turning_start(clip, int(onset), float(angle)))
    return out


STRAFE_ANGLES = np.radians([0.0, 45.0, -45.0, 90.0, -90.0, 135.0, -135.0, 180.0])
STRAFE_CHANGES_PER_WALK = 4     # random changes, besides those into and out of the forward step


def strafe_changes(walk, rng: np.random.Generator, count: int = STRAFE_CHANGES_PER_WALK) -> list:
    """Strafing that changes direction, the body facing ahead throughout: two side-steps of one
    walk (synthesis.side_step; 0 is its forward step) blended phase-aligned over 0.3 to 0.7 s, as
    when the stick turns while the strafe trigger is held. From the forward step into every other
    direction and back, and `count` random changes. Without them a network that was side-stepping
    kept on sideways when the stick asked it forward."""
    others = STRAFE_ANGLES[1:]
    pairs = [(0.0, a) for a in others] + [(a, 0.0) for a in others]
    pairs += [tuple(rng.choice(others, 2, replace=False)) for _ in range(count)]
    out = []
    for first, second in pairs:
        name = f"{walk.name}_strafe{np.degrees(first):+.0f}to{np.degrees(second):+.0f}"
        out.append(transition(side_step(walk, first), side_step(walk, second), 2.0, rng.uniform(0.3, 0.7), 2.5,
                              name=name))
    return out


JOGS_PER_WALK = 2


def gait_changes(walk, jog, rng: np.random.Generator) -> list:
    """Walking into jogging and back (phase-aligned blends) at a few speeds, turning a little,
    and jogging to a stop through a walk."""
    out = []
    walk_speeds, jog_speeds = speed_changes(walk), speed_changes(jog)
    for _ in range(2):
        fast_walk = at_speed(walk, *walk_speeds[rng.integers(len(walk_speeds))])
        some_jog = at_speed(jog, *jog_speeds[rng.integers(len(jog_speeds))])
        up = transition(fast_walk, some_jog, 2.0, rng.uniform(0.4, 1.0), 3.0)
        down = transition(some_jog, fast_walk, 2.0, rng.uniform(0.5, 1.0), 5.0)
        out += [bend(c, turn) for c in (up, down) for turn in (0.0, 0.6, -0.6)]
        out += stops(down, rng, 1, after=3.2)
    return out


TERRAIN_SHARE = 0.5             # of the synthesised clips walked over rolling ground instead of the flat
TERRAIN_AMPLITUDE = (5.0, 30.0)  # units: gentle swells to steep hills


def walked_path(clip) -> np.ndarray:
    """The root's path as the training windows see it: carried on past both ends of the clip."""
    positions = clip.positions.astype(np.float64)
    return extended_root(positions[:, 0].copy(), np.unwrap(facing_yaw(positions)), clip.gaits)[0]


def windows(clips: list, seed: int = SYNTHESIS_SEED, jumps: bool = True, walls_share: float = 0.0,
            jog_sides: str | None = None, moving_turns: int = 0, pivot_reversals: bool = False, phases=None,
            progress: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Training windows (X, Y, P, follows) of the extended clips and their mirrors, a share of
    them on random rolling ground so that the terrain inputs carry information, and `walls_share`
    of the rest on flat ground with blocks beside the path. With `phases` (a PhaseEncoder), every
    row also gets the phase manifold inputs and outputs of the DeepPhase controller
    (manifold_windows). follows (N,) bool: the row is the frame after the row before it, in one
    clip (what rollouts play through)."""
    rng = np.random.default_rng(seed + 1)
    parts = []
    built = extended(clips, seed, jumps, jog_sides, moving_turns, pivot_reversals)
    meter = _progress(progress)(total=len(built), desc="encoding phases" if phases is not None else "windows")
    for clip in built:
        meter.update(1)
        clip = plant_feet(clip)
        for version in (clip, mirror_clip(clip)):
            ground = None
            if version.ground is None and rng.random() < TERRAIN_SHARE:
                ground = RollingGround(rng, rng.uniform(*TERRAIN_AMPLITUDE))
                version = on_terrain(version, ground)
            elif version.ground is None and walls_share > 0 and rng.random() < walls_share:
                ground = WallsBeside(walked_path(version), rng)
            part = clip_windows(version, ground)
            if phases is not None and len(part[0]):
                extra_x, extra_y = manifold_windows(clip_manifold(phases, version.positions))
                part = (np.concatenate([part[0], extra_x], axis=1), np.concatenate([part[1], extra_y], axis=1), part[2])
            parts.append(part)
    meter.close()
    parts = [p + (np.arange(len(p[0])) > 0,) for p in parts if len(p[0])]
    if not parts:
        raise PfnnError("no clip is long enough for a training window (2 s at 60 fps)")
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(4))


def training_windows(training: list, held_out: list, phases, shape: dict, log) -> tuple:
    """The windows (X, Y, P, follows) of the training clips and (X, Y, P) of the held-out ones,
    None where they give no whole window; `shape` holds windows()'s jumps, walls_share, jog_sides
    and moving_turns."""
    built = windows(training, phases=phases, progress=sys.stderr.isatty(), **shape)
    try:
        held = windows(held_out, phases=phases, **shape)[:3] if held_out else None
    except PfnnError:
        held = None
        log("the held-out clips give no whole window: training without validation")
    return built, held


def held_out_clips(clips: list) -> list:
    """The clips a manifest marks for validation; without any, the last gait-cycle clip of every
    category that has another clip: validation that leaves every kind of motion in the training
    data."""
    marked = [clip for clip in clips if clip.validation]
    if marked:
        return marked
    by_category: dict[str, list] = {}
    for clip in clips:
        if clip.category and not clip.one_shot:
            by_category.setdefault(clip.category, []).append(clip)
    return [group[-1] for group in by_category.values() if len(group) >= 2]


def clip_names(file: Path) -> set[str]:
    """The names a clip's file goes by on the command line (`--leave-out`): with or without its extension."""
    return {file.name, file.stem}


def stood_on_ground(clip):
    """The clip with its planted feet stood on its ground (synthesis.ground_feet); stairs first
    given the ground recovered from their footsteps, whose treads follow the feet closer than
    steps fitted along the way up."""
    if clip.category == "stairs":
        clip = dataclasses.replace(clip, ground=labels.footstep_ground(clip.positions, clip.contacts))
    return ground_feet(clip)


def clips_from_folders(data, log, grounded: bool = False, leave_out=()) -> list:
    """The labelled clips of every folder in `data` (a folder or a list of them), with `grounded`
    stood on their ground, without the clips `leave_out` names."""
    folders = [Path(folder) for folder in (data if isinstance(data, list) else [data])]
    for folder in folders:
        if not folder.is_dir():
            raise PfnnError("no such data folder", folder)
    names = set().union(*(clip_names(file) for folder in folders for file in motion_files(folder)))
    for name in leave_out:
        if name not in names:
            raise PfnnError(f"--leave-out {name}: no clip of that name in the data folders")
    clips = []
    for folder in folders:
        log(f"labelling clips in {folder}")
        clips += load_clips(folder, log, grounded, tuple(leave_out))
    return clips


def _chosen_runs(config) -> str:
    """The provenance's words for the shares of the runs drawn from their own pools."""
    shares = [(getattr(config, name), words) for name, _, words in CHOSEN_RUNS if getattr(config, name) > 0]
    return "".join(f"{' (' if i == 0 else ', '}{share:g} {'of them ' if i == 0 else ''}{words}"
                   for i, (share, words) in enumerate(shares)) + (")" if shares else "")


def train_from_folder(args, log=None) -> Path:
    log = log or (lambda text: print(text, file=sys.stderr))
    _torch()   # without PyTorch, say so before a minute of labelling and synthesis
    chosen_runs = sum(getattr(args, name, None) or 0 for name, _, _ in CHOSEN_RUNS)
    if chosen_runs > 1:     # the shares of the runs drawn from their own pools
        flags = ["--" + name.replace("_", "-") for name, _, _ in CHOSEN_RUNS]
        raise PfnnError(f"{', '.join(flags[:-1])} and {flags[-1]} share the runs: together at most 1, "
                        f"not {chosen_runs:g}")
    model_kind = getattr(args, "model", "pfnn")
    phases = _phase_encoder(args, log) if model_kind == "deepphase" else None     # a bad file: at once
    initial = _network_to_start_from(args, model_kind, log)
    cache = getattr(args, "window_cache", None)
    if cache:
        check_folder(Path(cache), args.data if isinstance(args.data, list) else [args.data])   # before labelling
    grounded = getattr(args, "ground_feet", False)
    leave_out = getattr(args, "leave_out", None) or []
    clips = clips_from_folders(args.data, log, grounded, leave_out)
    folder = Path(args.data[0] if isinstance(args.data, list) else args.data)
    held_out = held_out_clips(clips)
    training = [c for c in clips if not any(c is h for h in held_out)]
    jumps = not getattr(args, "no_jumps_over_bars", False)
    sizes = _sizes_of(initial) if initial is not None else {}
    config = recipe(model_kind, hidden=sizes.get("hidden", args.hidden), epochs=args.epochs, batch_size=args.batch_size,
                    learning_rate=args.learning_rate, input_noise=args.input_noise,
                    phase_noise=args.phase_noise, pose_noise=args.pose_noise,
                    manifold_noise=getattr(args, "manifold_noise", None),
                    manifold_tempo=getattr(args, "manifold_tempo", None),
                    manifold_amplitude=getattr(args, "manifold_amplitude", None), seed=args.seed,
                    device=args.device, experts=sizes.get("experts", getattr(args, "experts", None)),
                    gate_hidden=sizes.get("gate_hidden"),
                    gate_phase=sizes.get("gate_phase", getattr(args, "gate_phase", False)) or None,
                    gate_ease=getattr(args, "gate_ease", None),
                    rollout_eased=getattr(args, "rollout_eased", False) or None,
                    walls_share=getattr(args, "walls_share", None),
                    jog_side_steps=getattr(args, "jog_side_steps", None),
                    rollout_frames=getattr(args, "rollout_frames", None),
                    rollout_updates=getattr(args, "rollout_updates", None),
                    rollout_trajectory=getattr(args, "rollout_trajectory", False) or None,
                    rollout_turns=getattr(args, "rollout_turns", None),
                    rollout_strafes=getattr(args, "rollout_strafes", None),
                    rollout_stops=getattr(args, "rollout_stops", None))
    walls_share, jog_sides = config.walls_share, config.jog_side_steps
    shape = {"jumps": jumps, "walls_share": walls_share, "jog_sides": jog_sides,
             "moving_turns": getattr(args, "moving_turns", 0) or 0}
    if getattr(args, "pivot_reversals", False):     # absent otherwise: older window caches keep their keys
        shape["pivot_reversals"] = True

    def build():
        return training_windows(training, held_out, phases, shape, log)

    if cache:
        folders = args.data if isinstance(args.data, list) else [args.data]
        made_of = {**shape, "grounded": grounded, "leave_out": sorted(leave_out)}
        key = window_key(folders, made_of, args.phases if phases is not None else None)
        (X, Y, P, follows), validation = cached_windows(cache, key, build, log,
                                                        {"data": [str(f) for f in folders], **made_of})
    else:
        (X, Y, P, follows), validation = build()
    log(f"{len(X)} training windows (with mirrors) from {len(training)} clips"
        + (f", {len(validation[0])} validation windows from {len(held_out)} held-out clips" if validation else ""))
    for name, array in (("inputs", X), ("outputs", Y), ("phases", P)):
        if not np.all(np.isfinite(array)):
            raise PfnnError(f"the training {name} hold NaN or infinite values: a clip is broken", folder)
    # Fine-tuning keeps the normalisation its network learned with: its weights read inputs so scaled.
    norm = ((initial.Xmean, initial.Xstd, initial.Ymean, initial.Ystd) if initial is not None
            else normalisation(X, Y, output_groups(phases.channels) if phases is not None else ()))
    checkpoint = Path(args.checkpoint) if args.checkpoint else None
    model, history = train(X, Y, P, norm, config, validation=validation, checkpoint=checkpoint,
                           resume=args.resume, progress=sys.stderr.isatty(), log=log, follows=follows,
                           initial=initial)
    keep = getattr(args, "keep_init", 0.0) or 0.0
    if keep > 0:
        keep_initial(_torch(), model, initial, keep)
        log(f"kept a share of {keep:g} of the starting network's weights")
    names = ", ".join(c.name for c in clips)
    sources = {c.source for c in clips}
    kind = {"mann": f"A mode-adaptive network (MANN: {config.experts} experts, a gate of two layers of "
                    f"{config.gate_hidden}{' reading its phase too' if config.gate_phase else ''}, "
                    f"AdamW with weight decay {config.weight_decay}). ",
            "deepphase": f"A DeepPhase controller ({config.experts} experts, a gate of two layers of "
                         f"{config.gate_hidden} reading the phase manifold of {phases.channels if phases else 0} "
                         f"channels along the trajectory, AdamW with weight decay {config.weight_decay}; "
                         f"phases from {Path(args.phases).name}). "}.get(model_kind, "")
    provenance = (kind + f"Trained by pfnn-demo from {len(clips)} clips ({names}) with synthesised variations "
                  f"and mirrors; " + (f"fine-tuned from the network of MD5 {file_md5(args.init)} with its "
                                      f"normalisation, peak learning rate {config.learning_rate:g}, "
                                      if initial is not None else "")
                  + f"{config.epochs} epoch{'s' if config.epochs != 1 else ''}, input noise {config.input_noise}, "
                  + (f"pose noise {config.pose_noise}, " if config.pose_noise is not None else "")
                  + (f"phase noise {config.phase_noise}, "
                     if config.phase_noise > 0 and (model_kind == "pfnn" or config.gate_phase) else "")
                  + (f"manifold noise {config.manifold_noise}, " if config.manifold_noise is not None
                     and model_kind == "deepphase" else "")
                  + (f"manifold tempo noise {config.manifold_tempo:g}, " if config.manifold_tempo > 0
                     and model_kind == "deepphase" else "")
                  + (f"manifold amplitude noise {config.manifold_amplitude:g}, " if config.manifold_amplitude > 0
                     and model_kind == "deepphase" else "")
                  + ("with the jumps over bars, " if jumps else "")
                  + (JOG_SIDE_WAYS[jog_sides].provenance if jog_sides else "")
                  + (f"{shape['moving_turns']} turns on the move per walk and jog cycle, " if shape["moving_turns"] else "")
                  + ("reversals turning as they slow, " if shape.get("pivot_reversals") else "")
                  + ("with planted feet stood on their ground, " if grounded else "")
                  + (f"leaving out {', '.join(leave_out)}, " if leave_out else "")
                  + (f"blocks beside the path of {walls_share:g} of the flat clips, " if walls_share > 0 else "")
                  + (f"then {config.rollout_updates} updates on runs of {config.rollout_frames} frames fed their "
                     f"own poses{' and near future' if config.rollout_trajectory else ''}"
                     f"{' (the experts blended as in play)' if config.rollout_eased and model_kind != 'pfnn' else ''}"
                     f"{_chosen_runs(config)}"
                     f"{' and phase manifold' if model_kind == 'deepphase' else ''}, "
                     if config.rollout_frames > 0 else "")
                  + (f"then a share of {keep:g} of the starting network's weights mixed back in, " if keep > 0 else "")
                  + (f"the experts' blend moving {model.gate_ease:g} of the way to the gate's each frame in play, "
                     if getattr(model, "gate_ease", DEFAULT_GATE_EASE) != DEFAULT_GATE_EASE else "")
                  + f"hidden {config.hidden}, seed {config.seed}."
                  + (" " + DEEPMIMIC_ACKNOWLEDGEMENT if "deepmimic" in sources else "")
                  + (" " + CMU_ACKNOWLEDGEMENT if "cmu" in sources else ""))
    out = Path(args.out)
    export(model, norm, out, provenance)
    log(f"wrote {out}" + (f" (final training loss {history[-1]['train_loss']:.4f})" if history else ""))
    return out


def _network_to_start_from(args, model_kind: str, log):
    """With --init, the saved network that training starts from (its weights, sizes and
    normalisation), checked before any work starts."""
    if getattr(args, "gate_phase", False) and model_kind != "mann":
        raise PfnnError(f"--gate-phase is for --model mann (a {model_kind} network's gate is its own)")
    if model_kind == "pfnn":
        for option, given in (("--gate-ease", getattr(args, "gate_ease", None) is not None),
                              ("--rollout-eased", getattr(args, "rollout_eased", False))):
            if given:
                raise PfnnError(f"{option} is for a network with a gate (--model mann or deepphase): a PFNN "
                                "blends its weights by the phase")
    if not getattr(args, "init", None):
        if getattr(args, "keep_init", 0.0):
            raise PfnnError("--keep-init mixes back the network given by --init: give --init too")
        if getattr(args, "epochs", None) == 0:
            raise PfnnError("--epochs 0 trains nothing from scratch: give --init to train a network on rollouts alone")
        return None
    kind, weights = read_network_weights(args.init)
    if kind != model_kind:
        raise PfnnError(f"a {kind} network; to fine-tune it, train with --model {kind}", args.init)
    if getattr(args, "gate_phase", False) and not getattr(weights, "gate_phase", False):
        weights = weights.with_phase_in_gate()
        log("its gate starts reading the phase with weights of zero on it: it plays as before until trained")
    hidden = _sizes_of(weights)["hidden"]
    if getattr(args, "hidden", None) not in (None, hidden):
        raise PfnnError(f"a network of {hidden} hidden units; leave --hidden out to fine-tune it", args.init)
    log(f"starting from {args.init}, its weights and normalisation")
    return weights


def _sizes_of(weights) -> dict:
    """The layer sizes of saved weights, as recipe settings."""
    sizes = {"hidden": int(weights.W0.shape[1])}
    if hasattr(weights, "G0"):     # a gated mixture of experts
        sizes.update(experts=int(weights.W0.shape[0]), gate_hidden=int(weights.G0.shape[0]),
                     gate_phase=bool(getattr(weights, "gate_phase", False)))
    return sizes


def _phase_encoder(args, log):
    """The periodic autoencoder that gives a DeepPhase controller's training data its manifold."""
    from ..phase_manifold import PhaseEncoder

    encoder = PhaseEncoder.load(args.phases)
    log(f"phase manifold of {encoder.channels} channels from {args.phases}: every training clip is encoded "
        "(a few minutes)")
    return encoder


def train_phases_from_folder(args, log=None) -> Path:
    """`pfnn-demo train-phases`: a periodic autoencoder on the clips of the data folders, their
    synthesised variations and mirrors; the phases file caches the manifold of every captured
    clip and its mirror."""
    from ..phase_manifold import velocity_features
    from .pae import PhaseConfig, export_phases, train_pae

    log = log or (lambda text: print(text, file=sys.stderr))
    _torch()
    clips = clips_from_folders(args.data, log)
    held_out = held_out_clips(clips)
    training = [c for c in clips if not any(c is h for h in held_out)]
    features = [velocity_features(version.positions) for clip in extended(training)
                for version in (clip, mirror_clip(clip))]
    validation = [velocity_features(version.positions) for clip in held_out for version in (clip, mirror_clip(clip))]
    config = PhaseConfig(**{k: v for k, v in vars(args).items()
                            if k in PhaseConfig.__dataclass_fields__ and v is not None})
    log(f"{sum(map(len, features))} frames (with mirrors) from {len(training)} clips and their variations"
        + (f", {sum(map(len, validation))} validation frames from {len(held_out)} held-out clips" if validation else ""))
    model, normalisation, history = train_pae(features, config, validation or None, progress=sys.stderr.isatty(),
                                              log=log)
    final = history[-1]
    sources = {c.source for c in clips}
    provenance = (f"A periodic autoencoder (DeepPhase) of {config.channels} channels over windows of "
                  f"{config.window} samples, {config.step} frames apart, of joint velocities, trained by pfnn-demo from {len(clips)} clips "
                  f"({', '.join(c.name for c in clips)}) with synthesised variations and mirrors; "
                  f"{config.epochs} epochs of {config.windows_per_epoch} windows, seed {config.seed}; "
                  f"reconstruction loss {final['train_loss']:.4f}"
                  + (f", validation {final['validation_loss']:.4f}" if "validation_loss" in final else "") + "."
                  + (" " + DEEPMIMIC_ACKNOWLEDGEMENT if "deepmimic" in sources else "")
                  + (" " + CMU_ACKNOWLEDGEMENT if "cmu" in sources else ""))
    captured = {version.name: velocity_features(version.positions) for clip in clips
                for version in (clip, mirror_clip(clip))}
    out = export_phases(model, normalisation, Path(args.out), provenance, captured, config.step, config.device)
    log(f"wrote {out} (reconstruction loss {final['train_loss']:.4f})")
    return out
