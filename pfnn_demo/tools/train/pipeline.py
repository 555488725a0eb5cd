"""`pfnn-demo train`: clips in a folder to an exported network, with progress and validation."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ...errors import PfnnError
from ...motion.bvh import read_bvh
from ...motion.deepmimic import load_deepmimic
from .database import clip_from_motion, clip_windows, mirror_clip, normalisation
from .synthesis import (TURN_RATES, RollingGround, at_speed, bend, crouch, loop_cycles, on_terrain, side_step,
                        speed_changes, stops, time_warp, transition, variations)
from .trainer import TrainConfig, export, train

CMU_ACKNOWLEDGEMENT = ("The data used in this project was obtained from mocap.cs.cmu.edu. "
                       "The database was created with funding from NSF EIA-0196217.")


DEEPMIMIC_ACKNOWLEDGEMENT = ("DeepMimic motion data (Peng et al. 2018) as shipped with the Bullet Physics "
                             "SDK's pybullet under the zlib licence.")
# A looping DeepMimic cycle is played this long before labelling, so that it holds whole cycles.
DEEPMIMIC_SECONDS = 8.0


def motion_files(folder: Path) -> list[Path]:
    """BVH clips and DeepMimic motions (.txt or .json) in a folder, sorted by name."""
    return sorted(f for f in folder.iterdir() if f.suffix.lower() in (".bvh", ".txt", ".json")
                  and f.name.lower() not in ("license.txt", "readme.txt"))


def load_motion(file: Path):
    if file.suffix.lower() == ".bvh":
        return read_bvh(file)
    return load_deepmimic(file, DEEPMIMIC_SECONDS)


def load_clips(folder: Path, log=print) -> list:
    files = motion_files(folder)
    if not files:
        raise PfnnError("no motion clips (.bvh, or DeepMimic .txt/.json) in the data folder", folder)
    clips = []
    for file in files:
        try:
            clip = clip_from_motion(load_motion(file), file.stem)
        except ValueError as error:
            raise PfnnError(str(error), file) from None
        clip.source = "bvh" if file.suffix.lower() == ".bvh" else "deepmimic"
        clips.append(clip)
        log(f"  {file.name}: {clip.frames} frames at 60 fps, gait {np.round(clip.gaits.mean(axis=0), 2).tolist()}")
    return clips


LOOP_SECONDS = 12.0
STOPS_PER_CLIP = 4
CROUCH_DEPTH = (24.0, 34.0)      # units the pelvis is lowered in a crouched walk
CROUCH_LEAN = (0.25, 0.5)        # radians the upper body bends forward
SIDE_STEP_ANGLES = np.radians([90.0, -90.0, 45.0, -45.0, 135.0, -135.0, 180.0])
SYNTHESIS_SEED = 7


def extended(clips: list, seed: int = SYNTHESIS_SEED) -> list:
    """Each clip, plus its first whole gait cycle looped for LOOP_SECONDS where it has one, at
    several speeds and turning at several rates (synthesis.variations), and, for walking clips,
    stops into standing and starts from it (synthesis.stops) and a crouched walk with the same
    variations (synthesis.crouch), and side-steps and backward steps in two random directions
    (synthesis.side_step); for every walk and jog, changes between them (gait_changes).
    Seeded: the same clips give the same motion."""
    rng = np.random.default_rng(seed)
    out = []
    loops = [loop_cycles(clip, LOOP_SECONDS) for clip in clips]
    walks = [c for c in loops if c is not None and c.gaits[:, 1].mean() > 0.5]
    jogs = [c for c in loops if c is not None and c.gaits[:, 2].mean() > 0.5]
    for walk in walks:
        for jog in jogs:
            out += gait_changes(walk, jog, rng)
    for clip, looped in zip(clips, loops):
        out.append(clip)
        if looped is not None:
            out += variations(looped)
            if looped.gaits[:, 1].mean() > 0.5:
                out += stops(looped, rng, STOPS_PER_CLIP)
                out += variations(crouch(looped, rng.uniform(*CROUCH_DEPTH), rng.uniform(*CROUCH_LEAN)),
                                  turn_rates=TURN_RATES[:5])
                for angle in rng.choice(SIDE_STEP_ANGLES, 2, replace=False):
                    out += [bend(time_warp(side_step(looped, angle), rate), turn)
                            for rate in (1.0, 1.35) for turn in (0.0, 0.6, -0.6)]
    return out


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


def windows(clips: list, seed: int = SYNTHESIS_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training windows of the extended clips and their mirrors, a share of them on random
    rolling ground so that the terrain inputs carry information."""
    rng = np.random.default_rng(seed + 1)
    parts = []
    for clip in extended(clips, seed):
        for version in (clip, mirror_clip(clip)):
            if rng.random() < TERRAIN_SHARE:
                ground = RollingGround(rng, rng.uniform(*TERRAIN_AMPLITUDE))
                parts.append(clip_windows(on_terrain(version, ground), ground))
            else:
                parts.append(clip_windows(version))
    parts = [p for p in parts if len(p[0])]
    if not parts:
        raise PfnnError("no clip is long enough for a training window (2 s at 60 fps)")
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))


def train_from_folder(args, log=None) -> Path:
    log = log or (lambda text: print(text, file=sys.stderr))
    folder = Path(args.data)
    if not folder.is_dir():
        raise PfnnError("no such data folder", folder)
    log(f"labelling clips in {folder}")
    clips = load_clips(folder, log)
    held_out = clips[3::4] if len(clips) >= 4 else []    # every 4th clip validates
    training = [c for c in clips if not any(c is h for h in held_out)]
    X, Y, P = windows(training)
    try:
        validation = windows(held_out) if held_out else None
    except PfnnError:
        validation = None
        log("the held-out clips give no whole window: training without validation")
    log(f"{len(X)} training windows (with mirrors) from {len(training)} clips"
        + (f", {len(validation[0])} validation windows from {len(held_out)} held-out clips" if validation else ""))
    norm = normalisation(X, Y)
    config = TrainConfig(hidden=args.hidden, epochs=args.epochs, batch_size=args.batch_size,
                         learning_rate=args.learning_rate, input_noise=args.input_noise, seed=args.seed,
                         device=args.device)
    checkpoint = Path(args.checkpoint) if args.checkpoint else None
    model, history = train(X, Y, P, norm, config, validation=validation, checkpoint=checkpoint,
                           resume=args.resume, progress=sys.stderr.isatty(), log=log)
    names = ", ".join(c.name for c in clips)
    sources = {c.source for c in clips}
    provenance = (f"Trained by pfnn-demo from {len(clips)} clips ({names}) with synthesised variations "
                  f"and mirrors; {config.epochs} epochs, input noise {config.input_noise}, "
                  f"hidden {config.hidden}, seed {config.seed}."
                  + (" " + DEEPMIMIC_ACKNOWLEDGEMENT if "deepmimic" in sources else "")
                  + (" " + CMU_ACKNOWLEDGEMENT if "bvh" in sources else ""))
    out = Path(args.out)
    export(model, norm, out, provenance)
    log(f"wrote {out} (final training loss {history[-1]['train_loss']:.4f})")
    return out
