"""The `pfnn-demo` command line: one parser, one small function per subcommand.

`pfnn-demo [options]` with no subcommand means `pfnn-demo run [options]`.
User mistakes (bad files, bad arguments) print one clear line and exit with status 2.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from .. import __version__
from ..errors import PfnnError
from ..resources import shipped_network_path
from ..sim.networks import describe_network
from ..sim.phase_network import MODES
from ..sim.recording import DEFAULT_RECORD_DIR, check_destination
from .train.pae import PhaseConfig
from .train.trainer import MODEL_DEFAULTS, TrainConfig   # torch is imported only when training starts

SEED_MAX = 2 ** 32 - 1   # numpy seeds are unsigned 32-bit numbers
SUBCOMMANDS = ("run", "replay", "screenshot", "make-terrain", "train", "train-phases", "plot-phases", "retarget",
               "eval", "average", "convert-weights", "character")

DESCRIPTION = """\
Phase-Functioned Neural Network character controller (Holden, Komura, Saito, SIGGRAPH 2017).

Play the demo, simulate headless from a script, record and replay motion (.npz or BVH), render
pictures offscreen, train and evaluate networks, learn the phase manifold of motion (DeepPhase),
or convert network weights.
With no subcommand, `pfnn-demo [options]` is `pfnn-demo run [options]`."""


def _add_network_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--network", metavar="PATH",
                        help="network weights: a .npz in the project format of any controller kind (a PFNN, "
                             "a MANN such as network/mann.npz, a DeepPhase controller such as "
                             "network/deepphase.npz), or the original PFNN release folder "
                             "(W0_000.bin ... b2_049.bin, Xmean.bin ...). Default: the shipped PFNN")
    parser.add_argument("--mode", choices=MODES, default=None,
                        help="a PFNN's way for the weights to follow the phase: exact cubic Catmull-Rom "
                             "(default), linear between 10 samples, or constant over 50 samples (the original "
                             "demo). Other kinds have no modes")


def _add_character_options(parser: argparse.ArgumentParser, window: bool = False) -> None:
    parser.add_argument("--character", metavar="FILE.glb",
                        help="draw a humanoid glTF rig (.glb or .gltf) instead of the mannequin, driven by the "
                             "canonical skeleton (docs/characters.md)")
    parser.add_argument("--character-map", metavar="MAP.json",
                        help="JSON object from canonical joint names (LeftUpLeg, ...) to the rig's joint names, "
                             "for joints the automatic mapping misses or gets wrong")
    if window:
        parser.add_argument("--character-dir", default="characters", metavar="DIR",
                            help="window: the menu's Character entry offers every .glb/.gltf in DIR "
                                 "(default: %(default)s in the current folder)")


def _recipe_defaults(field: str) -> str:
    """Help text for a training setting's default: the PFNN recipe's, then each kind's own
    (MODEL_DEFAULTS), so that help never restates a recipe by hand."""
    kinds_by_value: dict = {}
    for kind, changes in MODEL_DEFAULTS.items():
        if field in changes:
            kinds_by_value.setdefault(changes[field], []).append(kind)
    text = f"default {getattr(TrainConfig(), field):g}"
    return text + "".join(f"; {value:g} for --model {' or '.join(kinds)}" for value, kinds in kinds_by_value.items())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pfnn-demo", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"pfnn-demo {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    run = commands.add_parser(
        "run", help="play the demo (default), or simulate headless from a script or a recording's inputs",
        description="Play the character, or with --headless simulate a script without a window and record "
                    "the motion. In the window, F5 (pad: Y) or the menu starts and stops recording into "
                    "--record-dir.")
    _add_network_options(run)
    run.add_argument("--scene", default=None,
                     help="scene name (see --list-scenes) or path to a scene .json (default: plaza, or the "
                          "recording's scene with --replay-input)")
    run.add_argument("--list-scenes", action="store_true", help="list the shipped scenes and exit")
    run.add_argument("--headless", action="store_true", help="simulate without a window (needs --script)")
    run.add_argument("--script", metavar="FILE",
                     help="input script (.json, or the name of an example: walk_circle, jog_and_stop, ...)")
    run.add_argument("--replay-input", metavar="REC.npz",
                     help="drive the controller with the inputs of a .npz recording, from its recorded start "
                          "state (headless; the same network gives the same frames)")
    run.add_argument("--frames", type=_integer(1), metavar="N",
                     help="frames to simulate at 60 per second (default: the script's or recording's length)")
    run.add_argument("--record", metavar="OUT",
                     help="headless: save the motion; OUT.npz keeps everything (replayable), OUT.bvh the "
                          "drawn motion on the 31-joint skeleton at 60 fps, OUT.glb a glTF animation of the "
                          "mannequin or of --character's rig (for Blender and other tools)")
    run.add_argument("--record-dir", default=str(DEFAULT_RECORD_DIR), metavar="DIR",
                     help="window: folder for recordings made with F5 / Y / the menu (default: %(default)s "
                          "in the current folder)")
    run.add_argument("--record-format", choices=("npz", "bvh", "glb", "both", "all"), default="both",
                     help="window: what a recording writes: npz, bvh, glb (a glTF animation of the drawn body), "
                          "both (the .npz and the .bvh, the default) or all three")
    run.add_argument("--characters", type=_integer(1, MAX_CHARACTERS), default=1, metavar="N",
                     help="characters in the scene: the player and N-1 more, who wander (or follow "
                          "--crowd-script), simulated together (default 1; the menu changes it in the window)")
    run.add_argument("--crowd-script", action="append", default=[], metavar="FILE",
                     help="an input script for character 1, the next for character 2, ... (repeatable); "
                          "the others wander")
    run.add_argument("--seed", type=_integer(0, SEED_MAX), default=0, help="seed of the crowd's wandering and spawn points (default 0)")
    run.add_argument("--member", type=_integer(0), default=None, metavar="K",
                     help="with --replay-input of a crowd's recording: the character whose inputs to play (0: the player)")
    _add_character_options(run, window=True)
    run.add_argument("--no-ik", action="store_true", help="switch foot IK off (the script's 'ik' is ignored)")
    run.add_argument("--fullscreen", action="store_true", help="open the window fullscreen (F11 toggles)")
    run.add_argument("--size", type=_size, default=(1280, 720), metavar="WxH", help="window size (default 1280x720)")
    run.add_argument("--verbose", action="store_true",
                     help="also show the libraries' start-up messages (OpenGL context, SDL)")
    run.set_defaults(handler=_run)

    replay = commands.add_parser(
        "replay", help="watch a recording (.npz or .bvh) in the window",
        description="Play a recording in the window: Space pauses, Left/Right (or , .) step a frame, "
                    "Page Up/Down a second, [ and ] change the speed, Home restarts, F1 toggles the "
                    "trajectory drawing, F3 the contacts, the mouse or J L I K orbit the camera, Esc quits. "
                    "Pad: A pause, d-pad step, shoulders speed, right stick camera, B quit.")
    replay.add_argument("recording", metavar="FILE", help="a .npz recording or a BVH on the 31-joint skeleton")
    replay.add_argument("--scene", help="scene to stand it in (default: the recording's; plaza for BVH)")
    replay.add_argument("--bvh-scale", type=_number(0.0, above=True), default=1.0, metavar="S",
                        help="multiply a BVH's lengths by S (default 1: the demo's units, as `run --record` "
                             "writes; 5.6444 for CMU clips)")
    replay.add_argument("--frame", type=_integer(0), default=0, metavar="K", help="frame to start at (default 0)")
    replay.add_argument("--member", type=_integer(0), default=None, metavar="K",
                        help="of a crowd's recording, the character to watch (0: the player)")
    _add_character_options(replay)
    replay.add_argument("--paused", action="store_true", help="start paused")
    replay.add_argument("--fullscreen", action="store_true", help="open the window fullscreen")
    replay.add_argument("--size", type=_size, default=(1280, 720), metavar="WxH", help="window size (default 1280x720)")
    replay.add_argument("--verbose", action="store_true", help="also show the libraries' start-up messages")
    replay.set_defaults(handler=_replay)

    shot = commands.add_parser(
        "screenshot", help="render a picture offscreen (no window): a played script, a recorded frame or a BVH pose",
        description="Simulate a script headless and render its last frame offscreen through EGL, or render "
                    "frame K of a recording (--replay FILE --frame K) or a BVH pose (--bvh), and save it as "
                    "a picture (.png, .jpg, .bmp, .tga). Needs no display.")
    shot.add_argument("output", metavar="OUT.png", help="picture to write")
    _add_network_options(shot)
    shot.add_argument("--scene", help="scene name or path (default: plaza, or the recording's with --replay)")
    shot.add_argument("--script", default="walk_circle", help="input script to play first (default: walk_circle)")
    shot.add_argument("--frames", type=_integer(1), default=240, metavar="N", help="frames to play first (default 240)")
    shot.add_argument("--size", type=_size, default=(1280, 720), metavar="WxH", help="picture size (default 1280x720)")
    shot.add_argument("--no-hud", action="store_true", help="leave out the HUD")
    shot.add_argument("--no-debug", action="store_true", help="leave out the trajectory and area drawing")
    shot.add_argument("--skeleton", action="store_true", help="draw the canonical skeleton over the body")
    shot.add_argument("--bvh", metavar="FILE",
                      help="pose the character from a frame of a BVH clip in the 31-joint CMU hierarchy "
                           "instead of simulating (needs no network)")
    shot.add_argument("--bvh-frame", type=_integer(0), default=0, metavar="N", help="frame of --bvh to show (default 0)")
    shot.add_argument("--replay", metavar="FILE",
                      help="show a frame of a recording (.npz, or .bvh in the demo's units) instead of simulating")
    shot.add_argument("--frame", type=_integer(0), default=0, metavar="K", help="frame of --replay to show (default 0)")
    shot.add_argument("--member", type=_integer(0), default=None, metavar="K",
                      help="of a crowd's recording (--replay), the character to show (0: the player)")
    _add_character_options(shot)
    shot.add_argument("--camera-yaw", type=_number(), default=None, metavar="DEG", help="camera yaw in degrees")
    shot.add_argument("--camera-distance", type=_number(0.0, above=True), default=None, metavar="D",
                      help="camera distance from the player (default 300 units)")
    shot.add_argument("--characters", type=_integer(1, MAX_CHARACTERS), default=1, metavar="N",
                      help="play the script with N characters, the player and N-1 wandering (default 1)")
    shot.add_argument("--seed", type=_integer(0, SEED_MAX), default=0, help="seed of the crowd's wandering (default 0)")
    shot.set_defaults(handler=_screenshot)

    terrain = commands.add_parser(
        "make-terrain", help="generate a terrain scene (heightmap + scene file), seeded and deterministic",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Generate a heightmap and its scene file (walls, jump and crouch areas, start) and check "
                    "it against the walkability limits.\n\nkinds and their parameters (--set NAME=VALUE):\n"
                    + _terrain_kinds_help())
    terrain.add_argument("kind", help="hills, rocky, terraces, canyon, jump_course or urban")
    terrain.add_argument("name", help="scene name: writes NAME.npz and NAME.json")
    terrain.add_argument("--seed", type=_integer(0, SEED_MAX), default=0, help="random seed (default 0)")
    terrain.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                         help="a generator parameter, e.g. --set amplitude=50 (repeatable)")
    terrain.add_argument("--display-name", help="name shown in menus (default: from NAME)")
    terrain.add_argument("--description", default="", help="one line shown by --list-scenes")
    terrain.add_argument("--order", type=_integer(), default=100, help="position in menus (default 100)")
    terrain.add_argument("--out-dir", default=".", help="folder to write to (default: the current one)")
    terrain.set_defaults(handler=_make_terrain)

    trainer = commands.add_parser(
        "train", help="train a network from motion clips (needs the 'train' extra: PyTorch)",
        description="Label the clips (contacts, phase, gait), build the training windows with mirrors, "
                    "train a phase-functioned network (or with --model mann a mode-adaptive network, with "
                    "--model deepphase a DeepPhase controller on the phase manifold of --phases) and export it "
                    "in the project's format.")
    trainer.add_argument("--data", required=True, action="append", metavar="DIR",
                         help="folder of motion clips, subfolders included (repeat for several): .bvh clips in the "
                              "31-joint CMU hierarchy, CMU .amc clips with their subject's .asf beside them, "
                              "DeepMimic .txt/.json files; a clips.json beside clips gives their category and use "
                              "(see data/README.md). The shipped network: --data data/cmu --data data/motions")
    trainer.add_argument("--out", required=True, metavar="FILE.npz", help="network to write")
    recipe = TrainConfig()   # the defaults live in one place
    trainer.add_argument("--model", choices=tuple(MODEL_DEFAULTS), default="pfnn",
                         help="the controller kind to train: pfnn (the phase-functioned network, default), mann "
                              "(the mode-adaptive network: experts blended by a gating network, no phase input) or "
                              "deepphase (experts blended by the phase manifold, which the network also predicts)")
    trainer.add_argument("--phases", default=str(shipped_network_path("phases")), metavar="FILE.npz",
                         help="for --model deepphase: the phases file (pfnn-demo train-phases) whose encoder gives "
                              "every training frame its phase manifold (default: the shipped network/phases.npz)")
    trainer.add_argument("--epochs", type=_integer(0), default=None,
                         help=f"passes over the data ({_recipe_defaults('epochs')}; 0 with --init: only the "
                              "rollouts after them)")
    trainer.add_argument("--hidden", type=_integer(1), default=None,
                         help=f"hidden units per layer ({_recipe_defaults('hidden')})")
    trainer.add_argument("--experts", type=_integer(2), default=recipe.experts,
                         help="a MANN's or DeepPhase controller's experts (default %(default)s)")
    trainer.add_argument("--gate-phase", action="store_true",
                         help="for --model mann: the gate also reads the phase (the labelled one in training, the "
                              "one the network predicts and carries in play), as the Neural State Machine's gate "
                              "does; the motion network still reads no phase")
    trainer.add_argument("--gate-ease", type=_number(0.0, 1.0, above=True), default=None, metavar="SHARE",
                         help="for --model mann or deepphase: how far each character's blend of the experts moves "
                              "towards the gate's each frame in play, written into the network (1: the gate's own; "
                              "default: the --init network's, else 0.5)")
    trainer.add_argument("--rollout-eased", action="store_true",
                         help="for --model mann or deepphase: the runs on the network's own poses blend the experts "
                              "as play does, each frame's blend --gate-ease of the way from the last one's to the "
                              "gate's (without it the gate's own blend, as the base recipe)")
    trainer.add_argument("--batch-size", type=_integer(1), default=recipe.batch_size, help="mini-batch size (default %(default)s)")
    trainer.add_argument("--learning-rate", type=_number(0.0, above=True), default=recipe.learning_rate,
                         help="Adam's (a MANN: AdamW's) peak step size (default %(default)s)")
    trainer.add_argument("--input-noise", type=_number(0.0), default=recipe.input_noise,
                         help="std of noise added to the normalised inputs while training, for robustness "
                              "to the demo's own feedback (default %(default)s; 0 is the paper's recipe)")
    trainer.add_argument("--phase-noise", type=_number(0.0), default=recipe.phase_noise,
                         help="std of noise added to the training phases, in cycles, which keeps the weights' "
                              "phase function smooth (default %(default)s)")
    trainer.add_argument("--pose-noise", type=_number(0.0), default=recipe.pose_noise,
                         help="std of noise on the previous pose's inputs (joint positions and velocities) "
                              "instead of --input-noise; more than on the trajectory makes the network follow "
                              "the stick rather than carry on with its pose (default %(default)s)")
    trainer.add_argument("--manifold-noise", type=_number(0.0), default=None,
                         help="for --model deepphase: std of noise on the phase manifold inputs instead of "
                              "--input-noise (default: as --input-noise)")
    trainer.add_argument("--manifold-tempo", type=_number(0.0), default=None, metavar="SCALE",
                         help="for --model deepphase: play each window's phase manifold inputs fast or slow by a "
                              "factor of std SCALE (0.2: 20 %%) while the outputs stay captured, so that the "
                              "pace it shows is not the captured motion's (default 0: none; docs/controllers.md)")
    trainer.add_argument("--manifold-amplitude", type=_number(0.0), default=None, metavar="SCALE",
                         help="for --model deepphase: scale each window's phase manifold channels by factors "
                              "whose log has std SCALE (0.3: about 30 %%) while the outputs stay captured "
                              "(default 0: none; docs/controllers.md)")
    trainer.add_argument("--no-jumps-over-bars", action="store_true",
                         help="leave out the data's jumps taken over a bar, from standing and at walking and "
                              "jogging pace (they are in the shipped recipe)")
    trainer.add_argument("--jog-side-steps", nargs="?", const="any", choices=("any", "sideways"), default=None,
                         metavar="WAYS",
                         help="add the data's jogs turned off their facing, the body facing ahead, for jogging "
                              "while strafing or along a wall: 'any' (the default when given: three of sideways, "
                              "diagonally and backwards per jog) or 'sideways' (left and right only); off unless "
                              "given (docs/training.md, 'Jogging off the facing')")
    trainer.add_argument("--moving-turns", type=int, default=0, metavar="COUNT",
                         help="add COUNT turns by 90 to 180 degrees taken without slowing down from every "
                              "walk, crouched walk and jog cycle (default 0: none; docs/training.md, "
                              "'Turning on the move')")
    trainer.add_argument("--pivot-reversals", action="store_true",
                         help="the data's changes of direction turn the body as the walk slows, rather than "
                              "from just before it sets off again (docs/training.md, 'Pivoting reversals')")
    trainer.add_argument("--leave-out", action="append", metavar="CLIP",
                         help="leave a clip of the data folders out (its file name, e.g. 01_01.amc; repeatable)")
    trainer.add_argument("--ground-feet", action="store_true",
                         help="stand every planted foot of the captured clips on its ground (a spell moved at "
                              "most 8 units, spread over the swings; stairs on the ground of their footsteps): some "
                              "captures plant a foot floating or pitched (docs/training.md)")
    trainer.add_argument("--walls-share", type=_number(0.0, 1.0), default=None, metavar="SHARE",
                         help="of the clips on flat ground, the share walked beside blocks 20-120 units high "
                              "(streets and walls), which the terrain inputs at the trajectory's sides see "
                              f"({_recipe_defaults('walls_share')}; docs/evaluation.md has trials)")
    trainer.add_argument("--rollout-frames", type=_integer(0), default=None, metavar="FRAMES",
                         help="after the epochs, train on runs of this many consecutive frames, every pose "
                              f"input after the first (and a DeepPhase controller's phase manifold) the "
                              f"network's own prediction, as in play "
                              f"({_recipe_defaults('rollout_frames')}; 0: none)")
    trainer.add_argument("--rollout-trajectory", action="store_true",
                         help="in the rollouts, feed the network's predicted near future trajectory back as well, "
                              "bent toward the captured one as the predictor bends it toward the stick, not only "
                              "its poses (docs/training.md)")
    trainer.add_argument("--rollout-turns", type=_number(0.0, 1.0), default=None, metavar="SHARE",
                         help="draw this share of the rollouts' runs from the tenth of them that turn furthest "
                              "(reversals, sharp turns) rather than from all alike (default 0; docs/training.md, "
                              "'Runs through the turns')")
    trainer.add_argument("--rollout-strafes", type=_number(0.0, 1.0), default=None, metavar="SHARE",
                         help="draw this share of the rollouts' runs from the tenth of them that move furthest off "
                              "the facing (side-steps, walking backwards), where a MANN's pose freezes "
                              "(default 0; docs/training.md, 'Runs through the strafes')")
    trainer.add_argument("--rollout-stops", type=_number(0.0, 1.0), default=None, metavar="SHARE",
                         help="draw this share of the rollouts' runs from the tenth of them that come to a stand "
                              "most (walks and jogs stopping), where a network on its own poses may drift on or "
                              "keep stepping (default 0; docs/training.md, 'Runs into a stand')")
    trainer.add_argument("--rollout-updates", type=_integer(1), default=None, metavar="N",
                         help=f"updates of rollout training, {recipe.rollout_sequences} runs each "
                              f"(default {recipe.rollout_updates})")
    trainer.add_argument("--seed", type=_integer(0, SEED_MAX), default=recipe.seed, help="random seed (default %(default)s)")
    trainer.add_argument("--init", metavar="FILE.npz",
                         help="start from this network of the same kind (its weights, layer sizes and input "
                              "normalisation) instead of random weights: fine-tuning, for instance of a shipped "
                              "network on more data or with another recipe setting; give fewer --epochs and a "
                              "lower --learning-rate (docs/training.md)")
    trainer.add_argument("--keep-init", type=_number(0.0, 1.0), default=0.0, metavar="SHARE",
                         help="after fine-tuning, mix this share of the --init network's weights back into the "
                              "result (weight-space ensembling, WiSE-FT): 0 keeps the fine-tuned weights, 0.25 "
                              "moves them a quarter of the way back to where they started (default 0; "
                              "docs/training.md)")
    trainer.add_argument("--window-cache", metavar="DIR",
                         help="keep the training windows in this folder and read them back when training again "
                              "on the same data, options and code: a DeepPhase fine-tune or recipe trial then "
                              "skips the 19 minutes of building them and encoding the manifold (5.6 GB per "
                              "entry on the shipped data; outside the data folders; docs/training.md)")
    trainer.add_argument("--checkpoint", metavar="FILE", help="save a checkpoint after every epoch here")
    trainer.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    trainer.add_argument("--device", default="cpu", help="torch device (default cpu; cuda when you have one)")
    trainer.set_defaults(handler=_train)

    phases = commands.add_parser(
        "train-phases", help="learn the phase manifold of motion clips (DeepPhase's periodic autoencoder; "
                             "needs the 'train' extra)",
        description="Train a periodic autoencoder (DeepPhase, Starke et al. 2022) on one second of joint "
                    "velocities around every frame of the clips, their synthesised variations and mirrors. "
                    "Each latent channel is fitted with a sinusoid: its phase, frequency and amplitude give "
                    "every frame its point on the phase manifold. The file holds the encoder and the manifold "
                    "of every captured clip (docs/phase_manifold.md).")
    phases.add_argument("--data", required=True, action="append", metavar="DIR",
                        help="folder of motion clips, as for train (repeatable)")
    phases.add_argument("--out", required=True, metavar="FILE.npz", help="phases file to write, e.g. network/phases.npz")
    phase_recipe = PhaseConfig()
    phases.add_argument("--channels", type=_integer(1, 32), default=phase_recipe.channels,
                        help="latent phase channels M (default %(default)s)")
    phases.add_argument("--window", type=_integer(5, 601), default=phase_recipe.window,
                        help="samples per window, odd (default %(default)s)")
    phases.add_argument("--step", type=_integer(1, 10), default=phase_recipe.step,
                        help="frames (60 fps) from sample to sample (default %(default)s: the default window "
                             "spans two seconds)")
    phases.add_argument("--epochs", type=_integer(1), default=phase_recipe.epochs, help="epochs (default %(default)s)")
    phases.add_argument("--windows-per-epoch", type=_integer(1), default=phase_recipe.windows_per_epoch,
                        help="random windows trained on per epoch (default %(default)s)")
    phases.add_argument("--batch-size", type=_integer(2), default=phase_recipe.batch_size,
                        help="mini-batch size (default %(default)s)")
    phases.add_argument("--learning-rate", type=_number(0.0, above=True), default=phase_recipe.learning_rate,
                        help="AdamW's step size (default %(default)s)")
    phases.add_argument("--seed", type=_integer(0, SEED_MAX), default=phase_recipe.seed,
                        help="random seed (default %(default)s)")
    phases.add_argument("--device", default="cpu", help="torch device (default cpu; cuda when you have one)")
    phases.set_defaults(handler=_train_phases)

    plot = commands.add_parser(
        "plot-phases", help="draw the phase manifold of motion clips, and compare it with the contact phase",
        description="Encode clips with a phases file (train-phases) and draw, for each chosen clip, every "
                    "channel's phase, amplitude and frequency over time, and a 2D projection of the manifold "
                    "of all the clips coloured by clip. Prints a table per clip of how the strongest "
                    "channel follows the PFNN's contact phase labels.")
    plot.add_argument("destination", metavar="OUT.png", help="picture to write")
    plot.add_argument("--data", required=True, action="append", metavar="DIR", help="folder of motion clips (repeatable)")
    plot.add_argument("--phases", metavar="FILE.npz", default=None,
                      help="phases file (default: the shipped network/phases.npz)")
    plot.add_argument("--clip", action="append", metavar="NAME",
                      help="a clip to draw over time (repeatable; default: a walk, a run, a start and a stop)")
    plot.set_defaults(handler=_plot_phases)

    evaluate = commands.add_parser(
        "eval", help="compare networks on scripted play: foot skate, tracking, turns, phase, jitter, shake",
        description="Play each script headless with each network, print a table of quality metrics "
                    "and write a bar chart per metric. With several networks, every one after the first is "
                    "then judged case by case against the first (give the original network first) by the "
                    "project's quality bars: which cases miss which bar, and by how much.")
    evaluate.add_argument("--network", action="append", metavar="PATH",
                          help="a network to evaluate (repeat to compare; default: the shipped one)")
    evaluate.add_argument("--script", action="append", metavar="FILE",
                          help="scripts to play (repeatable; default: every example script)")
    evaluate.add_argument("--scene", default=None,
                          help="scene to play every script in, or 'all' for every scene (default: the scene a "
                               "script names, else plaza)")
    evaluate.add_argument("--raw-bones", action="store_true",
                          help="draw the network's raw poses instead of keeping the rest bone lengths")
    evaluate.add_argument("--mode", choices=MODES, default=None,
                          help="the PFNNs' network mode (default cubic; other kinds have none)")
    evaluate.add_argument("--shake-sources", action="store_true",
                          help="also split each network's shaking (its raw pose above about 7.5 Hz, in the root's "
                               "frame) into the part the phase makes alone, the part its inputs make alone and "
                               "the part they make together")
    evaluate.add_argument("--jobs", type=int, default=1, metavar="N",
                          help="play N cases at once, each in a worker process of its own with one BLAS thread "
                               "(default 1; the number of cores is the fastest; the figures agree but for float rounding)")
    evaluate.add_argument("--plots", metavar="DIR", default="eval_plots", help="folder for the PNG charts")
    evaluate.add_argument("--record-dir", metavar="DIR",
                          help="also save every play as a replayable .npz in DIR, so that the worst snapping "
                               "frames it prints can be looked at (screenshot --replay FILE --frame K)")
    evaluate.set_defaults(handler=_evaluate)

    retarget = commands.add_parser(
        "retarget", help="write a motion (BVH, CMU ASF/AMC or DeepMimic) on the project's skeleton as BVH",
        description="Retarget a BVH clip in the 31-joint CMU hierarchy, a CMU ASF/AMC clip or a DeepMimic "
                    "motion onto the project's canonical skeleton (the one the training uses) and write it "
                    "as BVH, e.g. to inspect it in Blender. An .amc clip reads its subject's skeleton from "
                    "the .asf beside it, as the CMU database lays them out (02_01.amc -> 02.asf), or from "
                    "--asf.")
    retarget.add_argument("source", metavar="SRC", help="BVH clip, CMU .amc clip, or DeepMimic motion (.txt, .json)")
    retarget.add_argument("destination", metavar="OUT.bvh", help="BVH file to write")
    retarget.add_argument("--asf", metavar="SUBJECT.asf",
                          help="the skeleton of an .amc clip (default: the subject's .asf beside it)")
    retarget.add_argument("--seconds", type=_number(0.0), default=0.0,
                          help="play a looping DeepMimic motion at least this long (default: once)")
    retarget.set_defaults(handler=_retarget)

    character = commands.add_parser(
        "character", help="your own character: inspect a humanoid glTF rig (docs/characters.md)",
        description="Commands about user characters (humanoid glTF rigs drawn with --character).")
    character_commands = character.add_subparsers(dest="character_command", metavar="COMMAND", required=True)
    inspect = character_commands.add_parser(
        "inspect", help="print a rig's joints, the joint map found and what stays unmapped",
        description="Read a .glb or .gltf, find which of its joints play the canonical skeleton's "
                    "(automatically, then --character-map), and print the hierarchy with each joint's "
                    "role. Exit status 0 when the rig can be driven, 2 with the reason when not.")
    inspect.add_argument("file", metavar="FILE.glb",
                         help="a humanoid rig (.glb, or .gltf with its buffers), or a bundled rig's name")
    inspect.add_argument("--character-map", metavar="MAP.json",
                         help="JSON object from canonical joint names to the rig's joint names")
    inspect.set_defaults(handler=_inspect_character)

    average = commands.add_parser(
        "average", help="average networks of one kind weight for weight (a model soup)",
        description="Write the weighted average of networks' weights, weight for weight: networks fine-tuned "
                    "from one start (train --init) lie in one basin, so their average plays as a network, "
                    "often with what each does well (docs/training.md, \"Keeping a share of the start\"). The "
                    "networks must be of one kind and size and share their normalisation; a MANN whose gate "
                    "reads the phase averages with one whose gate does not, the phase weighted by its share.")
    average.add_argument("out", metavar="OUT.npz", help="network to write")
    average.add_argument("networks", nargs="+", metavar="NET.npz[:SHARE]",
                         help="networks to average, each with its share (they add up to 1), or all without "
                              "(equal shares)")
    average.set_defaults(handler=_average)

    convert = commands.add_parser(
        "convert-weights", help="convert an original PFNN network folder to the project's .npz",
        description="Read the original release folder (50 phase slices per layer), recover the 4 "
                    "Catmull-Rom control points by least squares, and save them as one .npz.")
    convert.add_argument("source", metavar="SRC", help="original network folder (W0_000.bin ...)")
    convert.add_argument("destination", metavar="DST.npz", help="output file")
    convert.add_argument("--provenance", help="text stored with the weights (default: names the source and licence)")
    convert.set_defaults(handler=_convert_weights)
    return parser


def _terrain_kinds_help() -> str:
    import inspect

    from .terrain_gen import GENERATORS

    lines = []
    for kind, function in GENERATORS.items():
        parameters = [f"{name}={p.default}" for name, p in inspect.signature(function).parameters.items()
                      if name != "rng"]
        lines.append(f"  {kind:12s} {' '.join(parameters)}")
        lines.append(f"  {'':12s} {' '.join(inspect.getdoc(function).split())}")
    return "\n".join(lines)


def _make_terrain(args) -> int:
    import inspect

    from ..sim.scene import load_scene_file
    from .terrain_gen import GENERATORS, write_scene
    from .walkability import check_scene

    if args.kind not in GENERATORS:
        raise PfnnError(f"unknown terrain kind {args.kind!r}; choose one of {', '.join(GENERATORS)}")
    generator = GENERATORS[args.kind]
    accepted = {name: p.default for name, p in inspect.signature(generator).parameters.items() if name != "rng"}
    parameters = {}
    for item in args.set:
        name, _, value = item.partition("=")
        if name not in accepted:
            raise PfnnError(f"{args.kind} has no parameter {name!r}; its parameters are {', '.join(accepted)}")
        try:
            parameters[name] = type(accepted[name])(float(value)) if isinstance(accepted[name], int) else float(value)
        except ValueError:
            raise PfnnError(f"--set {item}: {value!r} is not a number") from None
    import numpy as np

    generated = generator(np.random.default_rng(args.seed), **parameters)
    display = args.display_name or args.name.replace("_", " ").capitalize()
    path = write_scene(generated, Path(args.out_dir), args.name, display, args.description, args.order,
                       {"kind": args.kind, "seed": args.seed, **parameters})
    report = check_scene(load_scene_file(path))
    print(f"wrote {path} and {path.with_suffix('.npz').name}: {generated.heights.shape[0]}x"
          f"{generated.heights.shape[1]} grid, {len(generated.walls)} walls, {len(generated.jump_areas)} jump areas")
    print(f"walkability: {report}" + ("" if report.ok else "  <- outside the limits"))
    return 0 if report.ok else 1


def _evaluate(args) -> int:
    from .eval_plays import Play, network_of, play_all, scene_of, script_of
    from .evaluation import bar_report, file_name, plot, shake_sources, snap_report, sources_table, table
    from ..sim.input_script import example_scripts
    from ..resources import default_network_path
    from ..sim.scene import scene_files

    if args.jobs < 1:
        raise PfnnError(f"--jobs must be at least 1 (got {args.jobs})")
    paths = args.network or [str(default_network_path())]
    networks, files = {}, {}
    for path in paths:
        label = Path(path).stem if Path(path).stem not in networks else path
        networks[label] = network_of(path, args.mode)      # a bad file stops here, before any play
        files[label] = path
    names = args.script or list(example_scripts())
    scripts = {Path(name).stem: (name, script_of(name)) for name in names}
    shipped_scenes = list(scene_files())
    cases = {}      # case -> (script's stem, scene name)
    for stem, (_, script) in scripts.items():
        if args.scene == "all":
            cases.update({f"{stem} @ {each}": (stem, each) for each in shipped_scenes})
        else:
            cases[stem] = (stem, args.scene or script.scene or "plaza")
    for scene_name in {scene_name for _, scene_name in cases.values()}:
        scene_of(scene_name)                                      # a bad scene stops here too
    record_dir = None if args.record_dir is None else Path(args.record_dir)
    if record_dir is not None:
        from ..sim.recording import check_destination

        check_destination(record_dir / "check.npz")
    plays = [Play(case, label, files[label], args.mode, scripts[stem][0], scene_name, scripts[stem][1].frames,
                  not args.raw_bones, None if record_dir is None else record_dir / file_name(f"{case}-{label}.npz"))
             for case, (stem, scene_name) in cases.items() for label in networks]
    results = play_all(plays, args.jobs, progress=sys.stderr.isatty())
    print(table(results))
    print()
    print(snap_report(results))
    if len(networks) > 1:
        print()
        print(bar_report(results))
    if args.shake_sources:
        print()
        phased = {label: network for label, network in networks.items() if network.kind == "pfnn"}
        print(sources_table({case: {label: shake_sources(network, scene_of(scene_name), scripts[stem][1])
                                    for label, network in phased.items()}
                             for case, (stem, scene_name) in cases.items()}))
        if len(phased) < len(networks):
            print("(shaking sources are split for phase-functioned networks only)")
    written = plot(results, Path(args.plots))
    print(f"wrote {len(written)} charts to {args.plots}/")
    return 0


def _train(args) -> int:
    from .train.pipeline import train_from_folder

    if args.moving_turns < 0:
        raise PfnnError(f"--moving-turns must be 0 or more (got {args.moving_turns})")
    train_from_folder(args)
    return 0


def _train_phases(args) -> int:
    from .train.pipeline import train_phases_from_folder

    if args.window % 2 == 0:
        raise PfnnError(f"--window must be odd, so that a window has a centre frame (got {args.window})")
    check_destination(args.out, (".npz",))
    train_phases_from_folder(args)
    return 0


def _plot_phases(args) -> int:
    from .plot_phases import plot_phases

    check_destination(args.destination, (".png",))
    table = plot_phases(args.data, args.destination, args.phases, args.clip)
    print(table)
    print(f"wrote {args.destination}")
    return 0


def _retarget(args) -> int:
    from ..motion.acclaim import load_amc
    from ..motion.bvh import read_bvh, write_bvh
    from ..motion.deepmimic import load_deepmimic
    from ..sim.recording import check_destination
    from .train.database import retarget_to_canonical

    source = Path(args.source)
    if not source.is_file():
        raise PfnnError("no such motion file", source)
    suffix = source.suffix.lower()
    if args.asf is not None and suffix != ".amc":
        raise PfnnError("--asf goes with an .amc clip", source)
    check_destination(Path(args.destination), (".bvh",))
    if suffix in (".bvh", ".amc"):
        motion = read_bvh(source) if suffix == ".bvh" else load_amc(source, args.asf)
        try:
            motion = retarget_to_canonical(motion, align_rest=suffix == ".amc")
        except ValueError as error:
            raise PfnnError(str(error), source) from None
    else:
        motion = load_deepmimic(source, args.seconds)
    write_bvh(motion, args.destination)
    print(f"wrote {args.destination}: {motion.frames} frames at {1 / motion.frame_time:.0f} fps")
    return 0


def _integer(low: int | None = None, high: int | None = None):
    """An argparse type: a whole number in [low, high] (either bound may be open)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range ({_bounds(low, high)})")
        return value
    return parse


def _number(low: float | None = None, high: float | None = None, above: bool = False):
    """An argparse type: a finite number in [low, high], or above `low` where `above`."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
        if low is not None and (value <= low if above else value < low) or high is not None and value > high:
            raise argparse.ArgumentTypeError(f"{text} is out of range ({_bounds(low, high, above)})")
        return value
    return parse


def _bounds(low, high, above: bool = False) -> str:
    if high is None:
        return f"{'above' if above else 'at least'} {low}"
    if low is None:
        return f"at most {high}"
    return f"above {low}, at most {high}" if above else f"{low} to {high}"


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1280x720, got {text!r}") from None
    if not (16 <= width <= 16384 and 16 <= height <= 16384):
        raise argparse.ArgumentTypeError(f"size {text} is out of range (16 to 16384 pixels a side)")
    return width, height


def _load_network(args):
    from ..library import load_network

    return load_network(args.network, args.mode)


def _load_character(args):
    """(rig, retargeter, name) of --character, or None; a --character-map alone is an error."""
    if args.character is None:
        if args.character_map is not None:
            raise PfnnError("--character-map needs --character FILE.glb")
        return None
    from ..character import load_character

    rig, _, retargeter = load_character(args.character, args.character_map)
    return rig, retargeter, Path(args.character).stem


def _inspect_character(args) -> int:
    from ..character import Retargeter, find_joint_map, load_rig, resolve_character
    from ..character.inspect import describe

    rig = load_rig(resolve_character(args.file))
    joint_map = find_joint_map(rig, args.character_map)
    scale = None if joint_map.missing() else Retargeter(rig, joint_map).scale
    print("\n".join(describe(rig, joint_map, scale)))
    return 2 if joint_map.missing() else 0


def _export_body(character, record: str, scene):
    """The body a .glb recording animates: the loaded --character (`_load_character`), or None
    (the mannequin)."""
    if character is None or not str(record).lower().endswith(".glb"):
        return None
    from ..motion.gltf_export import rig_body

    return rig_body(character[0], character[1], scene.heightmap.sample)


def _list_scenes() -> int:
    from ..sim.scene import load_scene_file, scene_files

    for name, path in scene_files().items():
        try:
            scene = load_scene_file(path)
            print(f"{name:16s} {scene.display_name}: {scene.description}")
        except PfnnError as error:
            print(f"{name:16s} (broken: {error})")
    return 0


def _run(args) -> int:
    if args.list_scenes:
        return _list_scenes()
    if args.headless or args.replay_input:
        return _run_headless(args)
    if args.record:
        raise PfnnError("--record is for headless runs (--headless --script FILE); in the window, F5, the pad's "
                        "Y or the menu records into --record-dir")
    count = args.characters
    if args.crowd_script:
        raise PfnnError("--crowd-script is for headless runs; in the window the other characters wander")
    network = _load_network(args)   # a missing network is the first thing to report
    from ..sim.scene import load_scene

    scene = args.scene or "plaza"
    load_scene(scene)   # reports a bad scene before a window opens
    record_dir = Path(args.record_dir)
    formats = {"both": ("npz", "bvh"), "all": ("npz", "bvh", "glb")}.get(args.record_format, (args.record_format,))
    _quiet_libraries(args.verbose)
    from ..app.demo import Demo
    from ..app.window_app import run_window
    from ..resources import default_network_path

    _load_character(args)   # reports a rig that cannot be driven before a window opens
    run_window(lambda ctx: Demo(ctx, network, scene, record_dir, formats, count, args.seed, args.character,
                                args.character_map, args.character_dir,
                                args.network or default_network_path()), args.size, args.fullscreen,
               verbose=args.verbose)
    return 0


def _quiet_libraries(verbose: bool) -> None:
    """Keep library start-up messages a user cannot act on off the console, unless asked for."""
    import os
    import warnings

    if not verbose:
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")   # the demo plays no sound
        # pygame warns when the driver offers no vsync (software OpenGL, some remote displays): the
        # fixed 60 Hz tick does not depend on it. moderngl-window's own `import glm` deprecation.
        warnings.filterwarnings("ignore", message="regular vsync for OpenGL not available")
        warnings.filterwarnings("ignore", category=PendingDeprecationWarning, module=r"moderngl_window\b.*")


def _replay(args) -> int:
    from ..app.playback import Playback
    from ..sim.recording import load_recording
    from ..sim.scene import load_scene

    recording = load_recording(args.recording, args.bvh_scale, args.member)
    scene = load_scene(args.scene or recording.scene or "plaza")
    playback = Playback(recording, scene)
    _check_frame(args.frame, recording)
    playback.seek(args.frame)
    playback.paused = args.paused
    _quiet_libraries(args.verbose)
    from ..app.replay_demo import ReplayDemo
    from ..app.window_app import run_window

    title = Path(args.recording).name
    character = _load_character(args)
    run_window(lambda ctx: ReplayDemo(ctx, playback, title, character), args.size, args.fullscreen,
               title=f"pfnn-demo replay: {title}", verbose=args.verbose)
    return 0


def _check_frame(frame: int, recording) -> None:
    if not 0 <= frame < recording.frames:
        raise PfnnError(f"frame {frame} is outside the recording's {recording.frames} frames (0 to "
                        f"{recording.frames - 1})", recording.path)


def _screenshot(args) -> int:
    import math

    from ..app.render.hud import Hud
    from ..app.render.offscreen import OffscreenTarget, create_offscreen_context, save_png
    from ..app.render.renderer import Renderer, ViewOptions
    from ..sim.scene import load_scene

    check_destination(args.output, IMAGE_FORMATS)
    if args.bvh and args.replay:
        raise PfnnError("give either --bvh or --replay, not both")
    if args.replay:
        frame, overlays = _replay_frame(args)
        debug = not args.no_debug
    else:
        scene = load_scene(args.scene or "plaza")
        if args.bvh:
            frame, overlays = _still_pose(args, scene), []
            debug = not args.no_debug      # a still pose has no trajectory: walls and areas only
        else:
            frame, controls = _simulated_frame(args, scene)
            overlays = [] if args.no_hud else [("hud", Hud().draw(controls, frame, 60.0, scene.display_name), (12, 12))]
            debug = not args.no_debug
    if args.camera_yaw is not None:
        frame.camera.yaw = math.radians(args.camera_yaw)
    if args.camera_distance is not None:
        frame.camera.distance = args.camera_distance
    character = _load_character(args)
    ctx = create_offscreen_context()
    target = OffscreenTarget(ctx, args.size)
    renderer = Renderer(ctx)
    if character is not None:
        from ..app.render.body import RigBody
        renderer.set_body(RigBody(ctx, renderer.programs, *character))
    renderer.render(target.framebuffer, frame, ViewOptions(debug=debug or args.skeleton, skeleton=args.skeleton,
                                                           show_areas=debug, show_contacts=debug), overlays)
    path = save_png(target.read(), args.output)
    print(f"wrote {path} ({args.size[0]}x{args.size[1]}, {ctx.info['GL_RENDERER']})")
    return 0


IMAGE_FORMATS = (".png", ".jpg", ".jpeg", ".bmp", ".tga")


def _replay_frame(args):
    from ..app.playback import Playback
    from ..sim.recording import load_recording
    from ..app.render.replay_hud import ReplayHud
    from ..app.replay_demo import HELP
    from ..sim.scene import load_scene

    recording = load_recording(args.replay, character=args.member)
    playback = Playback(recording, load_scene(args.scene or recording.scene or "plaza"))
    _check_frame(args.frame, recording)
    playback.seek(args.frame)
    playback.paused = True
    playback.camera.target = playback._camera_goal()
    overlays = [] if args.no_hud else [("replay", ReplayHud().draw(playback, Path(args.replay).name, HELP), (12, 12))]
    return playback, overlays


def _simulated_frame(args, scene):
    from ..sim.controller import Controller
    from ..sim.headless import simulate
    from ..sim.input_script import InputScript

    from ..sim.wander import CrowdBehaviour, spawn_points

    script = InputScript.load(args.script)
    count = args.characters
    network = _load_network(args)
    if count > 1:
        controller = Controller(network, scene, characters=count, starts=spawn_points(scene, count, args.seed))
        crowd = CrowdBehaviour(scene, count, args.seed)
    else:
        controller, crowd = Controller(network, scene, starts=script.starts_in(scene)), None
    frames = max(args.frames, 1)
    _, failure = simulate(controller, script, frames, crowd=crowd)
    if failure is not None:
        raise failure
    return controller, script.state(frames - 1)


def _still_pose(args, scene):
    from ..motion.bvh import read_bvh
    from ..app.render.still_pose import StillPose

    motion = read_bvh(args.bvh)
    if not 0 <= args.bvh_frame < motion.frames:
        raise PfnnError(f"--bvh-frame {args.bvh_frame} is outside the clip's {motion.frames} frames", args.bvh)
    return StillPose.from_motion(motion, args.bvh_frame, scene)


def _run_headless(args) -> int:
    from ..sim.controller import Controller
    from ..sim.headless import simulate
    from ..sim.input_script import InputScript
    from ..sim.recording import Recorder, RecordedInput, load_recording
    from ..sim.scene import load_scene
    from ..sim.wander import CrowdBehaviour, spawn_points

    if args.record:
        check_destination(args.record)        # before any work: a bad destination loses nothing
    character = _load_character(args)         # ... nor a rig that cannot be driven
    if args.frames is not None and args.frames <= 0:
        raise PfnnError(f"--frames must be positive, got {args.frames}")
    if args.replay_input:
        if args.script:
            raise PfnnError("give either --script or --replay-input, not both")
        recording = load_recording(args.replay_input, character=args.member)
        script = RecordedInput(recording)
        source = Path(args.replay_input).name + " (its inputs)"
        scene = load_scene(args.scene or recording.scene or "plaza")
    elif args.script:
        script = InputScript.load(args.script)
        source = Path(args.script).name
        scene = load_scene(args.scene or script.scene or "plaza")
    else:
        raise PfnnError("--headless needs --script FILE (an input script; see README, 'Input scripts') "
                        "or --replay-input REC.npz")
    if args.no_ik:
        script = script.without_ik()
    count = args.characters
    if args.replay_input and count > 1:
        raise PfnnError("--replay-input plays one character's inputs; leave out --characters")
    crowd_scripts = {i + 1: InputScript.load(path) for i, path in enumerate(args.crowd_script)}
    if len(crowd_scripts) > count - 1:
        raise PfnnError(f"{len(crowd_scripts)} --crowd-script files for {count - 1} other characters; "
                        f"raise --characters to at least {len(crowd_scripts) + 1}")
    network = _load_network(args)
    frames = min(args.frames or script.frames, script.frames) if args.replay_input else (args.frames or script.frames)
    crowd = None
    if count > 1:
        crowd = CrowdBehaviour(scene, count, args.seed, crowd_scripts)
        controller = Controller(network, scene, characters=count, starts=spawn_points(scene, count, args.seed))
    else:
        controller = Controller(network, scene, starts=None if args.replay_input else script.starts_in(scene))
    if args.replay_input:
        script.prepare(controller)
    recorder = Recorder(controller) if args.record else None
    who = "" if count == 1 else f", {count} characters"
    print(f"simulating {frames} frames ({frames / 60:.1f} s) of {source} in scene "
          f"{scene.name!r}, {describe_network(network)}{who}{', IK off' if args.no_ik else ''}", file=sys.stderr)
    seconds, failure = simulate(controller, script, frames, recorder, progress=sys.stderr.isatty(), crowd=crowd)
    done = len(recorder) if recorder is not None else (controller.frame)
    print(f"{done} frames in {seconds:.2f} s ({done / max(seconds, 1e-9) / 60:.1f}x real time)", file=sys.stderr)
    if recorder is not None and len(recorder):
        path = recorder.save(args.record, scene.name, recorder.first_mode, network.weights.provenance,
                             _export_body(character, args.record, scene))
        print(f"wrote {path}" + ("" if failure is None else f" ({len(recorder)} frames, up to the failure)"),
              file=sys.stderr)
    if failure is not None:
        raise failure
    return 0


MAX_CHARACTERS = 1024


def _average(args) -> int:
    from .average import average_networks, average_shares, parse_part, write_average

    check_destination(args.out, (".npz",))   # refused before any network is read
    parts = [parse_part(text) for text in args.networks]
    shares = average_shares([share for _, share in parts])
    kind, weights = average_networks([path for path, _ in parts], shares)
    write_average(args.out, kind, weights)
    print(f"wrote {args.out}: a {kind} network, " + ", ".join(f"{share:g} of {path}" for (path, _), share in
                                                              zip(parts, shares)))
    return 0


def _convert_weights(args) -> int:
    from ..sim.weights import load_original_folder, save_npz

    destination = Path(args.destination)
    if destination.suffix.lower() != ".npz":
        raise PfnnError("the destination must end in .npz", destination)
    weights = load_original_folder(args.source)
    if args.provenance:
        weights.provenance = args.provenance
    destination.parent.mkdir(parents=True, exist_ok=True)
    save_npz(weights, destination)
    sizes = f"{weights.input_size}-{weights.hidden_sizes[0]}-{weights.hidden_sizes[1]}-{weights.output_size}"
    print(f"wrote {destination} ({destination.stat().st_size / 2**20:.1f} MiB, network {sizes})")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "run")
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except PfnnError as error:
        print(f"pfnn-demo: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
