"""Quality metrics of a network, from headless recordings of scripts, compared across networks.

  foot skate      mean horizontal speed (units/s) of heel and toe joints on frames of their contact
  contact height  mean height (units) of toe joints above the terrain on frames of their contact,
                  where the ground is walkable (`on_walkable_ground`: not beside a block or a cliff)
  tracking        mean distance (units/s) between the root's velocity and the target velocity
  open tracking   the same on frames away from walls only (bump gait under 0.5): at a wall the
                  stick may push into it, the trajectory stops there and so does the character,
                  so `tracking` also counts how long a path spends against walls
  turn time       seconds until the root faces within 20 degrees of a reversed stick direction
                  (not strafing; timed while the stick holds that way)
  phase speed     gait cycles per second while walking and while jogging
  jitter          mean joint acceleration (units/s^2), lower is smoother
  shake           the same for the motion faster than about 7.5 Hz only (the pose minus its
                  low-passed self): the shaking, without the steps' and swings' own accelerations
  standing feet   mean speed (units/s) of heel and toe joints once the stick has been released
                  for STANDING_AFTER seconds (a settled stand: both feet planted and still)
  snaps           frames in which a drawn joint's acceleration passes SNAP_ACCELERATION: the
                  violent frames that a mean (jitter) hides, such as a knee swinging round
  worst jump      the largest second difference of a drawn joint's position (units): how far a
                  joint left the path its last two frames set (a snap's size)
  bone length     largest deviation (%) of any drawn bone from its rest length, over all frames
  raw bone length 99th percentile (%) of the same for the network's raw pose (before bone
                  lengths are kept and before foot IK)
  wall crossings  steps of the root that cross a wall's centre line (0 = stayed inside)
  completed       share of the script played before the network failed (1 = all of it)

`shake_sources` splits a network's shaking into what the phase does and what the inputs do.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy import ndimage

from ..sim.bone_lengths import FINGERS, bone_length_deviation
from ..sim.controller import Controller
from ..sim.features import OUTPUT
from ..sim.headless import simulate
from ..sim.input_script import InputScript
from ..sim.scene import steps_crossing_walls
from ..sim.skeleton import CONTACT_JOINTS, JOINT_COUNT, JOINT_NAMES
from ..sim.recording import Recorder
from ..sim.features import BUMP

FPS = 60
METRICS = ("completed", "foot skate", "contact height", "tracking", "open tracking", "turn time",
           "phase speed walk", "phase speed jog", "jitter", "shake", "snaps", "worst jump", "gliding",
           "standing feet", "bone length", "raw bone length", "wall crossings")
STANDING_AFTER = 1.0     # seconds after the stick is released that the feet must be still
# Units/s^2 (a second difference of 5.6 units at 60 fps). In the captured clips of data/cmu
# (retargeted, at 60 fps) the 99.9th percentile of the joints' accelerations is 1,000-14,500 in
# every clip but the jumps of 16_27 (22,600); walking peaks at 7,100 (02_01), running at 21,400.
SNAP_ACCELERATION = 20_000.0
# The joints that snaps are counted on: all but the index fingers, which no network is trained on
# and the mannequin does not draw.
SNAP_JOINTS = np.setdiff1d(np.arange(JOINT_COUNT), FINGERS)


def record(network, scene, script: InputScript, keep_bone_lengths: bool = True,
           save_to: Path | None = None, network_name: str = "") -> dict[str, np.ndarray]:
    """The recorded arrays of `script` played in `scene` (and written to `save_to`, a .npz)."""
    controller = Controller(network, scene, starts=script.starts_in(scene), keep_bone_lengths=keep_bone_lengths)
    recorder = Recorder(controller)
    _, failure = simulate(controller, script, script.frames, recorder)
    if save_to is not None:
        recorder.save(save_to, scene.name, network.mode, network_name)
    arrays = recorder.arrays()
    arrays["completed"] = np.array(len(recorder) / max(script.frames, 1))
    return arrays


def metrics(recording: dict[str, np.ndarray], terrain, walls: np.ndarray | None = None) -> dict[str, object]:
    """Every metric of METRICS (floats), and "worst snaps" (`worst_snaps`)."""
    joints = recording["joint_positions"].astype(np.float64)
    if len(joints) < 3:   # the network failed at once: nothing to measure
        return ({metric: math.nan for metric in METRICS} | {"completed": float(recording.get("completed", 0.0)),
                                                              "worst snaps": []})
    contacts = recording["contacts"]
    feet = joints[:, CONTACT_JOINTS]
    speed = np.linalg.norm(np.diff(feet[:, :, [0, 2]], axis=0), axis=-1) * FPS
    in_contact = contacts[1:] > 0.5
    toes = feet[:, [1, 3]]
    toe_height = toes[..., 1] - terrain.sample(toes[..., 0], toes[..., 2])
    toe_contact = (contacts[:, [1, 3]] > 0.5) & on_walkable_ground(terrain, toes)
    root = recording["root_position"].astype(np.float64)
    tracking = tracking_errors(recording)
    phase_rate = np.mod(np.diff(recording["phase"]), 2 * np.pi) / (2 * np.pi) * FPS
    gait = recording["gait"][1:]
    open_ground = gait[:, BUMP] < 0.5
    accelerations = joint_accelerations(joints)
    return {
        "completed": float(recording.get("completed", 1.0)),
        "foot skate": float(speed[in_contact].mean()) if in_contact.any() else math.nan,
        "contact height": float(toe_height[toe_contact].mean()) if toe_contact.any() else math.nan,
        "tracking": float(tracking.mean()),
        "open tracking": float(tracking[open_ground].mean()) if open_ground.any() else math.nan,
        "turn time": turn_time(recording),
        "phase speed walk": float(phase_rate[gait[:, 1] > 0.5].mean()) if np.any(gait[:, 1] > 0.5) else math.nan,
        "phase speed jog": float(phase_rate[gait[:, 2] > 0.5].mean()) if np.any(gait[:, 2] > 0.5) else math.nan,
        "jitter": mean_acceleration(joints),
        "shake": shake(joints),
        "snaps": float(np.count_nonzero(np.any(accelerations > SNAP_ACCELERATION, axis=1))),
        "worst jump": float(accelerations.max() / (FPS * FPS)),
        "gliding": 100.0 * gliding_share(recording["joint_positions_raw"], root),
        "standing feet": standing_foot_speed(recording),
        "bone length": 100.0 * float(bone_length_deviation(joints).max()),
        "raw bone length": 100.0 * float(np.percentile(bone_length_deviation(recording["joint_positions_raw"]), 99)),
        "wall crossings": float(wall_crossings(root, walls)) if walls is not None else math.nan,
        "worst snaps": worst_snaps(accelerations),
    }


# A toe beside a block or over a cliff's edge has two grounds within a foot's reach, and a terrain
# sample there reads neither: in urban, toes planted on the street beside blocks stood 58.7 units
# "below" the ground. Slopes steeper than 45 degrees (EDGE_STEP over twice FOOT_REACH) are such
# edges: the natural scenes' steepest ground rises 8.4 units over that span, terraces' steps 12.
FOOT_REACH = 10.0      # units
EDGE_STEP = 20.0       # units


def tracking_errors(recording: dict[str, np.ndarray]) -> np.ndarray:
    """Per frame after the first, the horizontal distance (units/s) between the root's velocity
    and the target velocity."""
    velocity = np.diff(recording["root_position"].astype(np.float64), axis=0) * FPS
    target = recording["target_velocity"][1:].astype(np.float64) * FPS
    return np.linalg.norm((velocity - target)[:, [0, 2]], axis=1)


def on_walkable_ground(terrain, points: np.ndarray) -> np.ndarray:
    """Which points (..., 3) stand where the terrain within FOOT_REACH (ahead, behind, to each
    side) spans less than EDGE_STEP in height."""
    x, z = points[..., 0], points[..., 2]
    heights = np.stack([terrain.sample(x + dx, z + dz) for dx, dz in
                        ((0, 0), (FOOT_REACH, 0), (-FOOT_REACH, 0), (0, FOOT_REACH), (0, -FOOT_REACH))])
    return heights.max(axis=0) - heights.min(axis=0) < EDGE_STEP


# Frames: a Gaussian of this width at 60 fps keeps 95 % of a 2 Hz movement and half of a 7.5 Hz one.
SHAKE_SIGMA = 1.5


def shake(joints: np.ndarray) -> float:
    """Mean acceleration (units/s^2) of the joints' motion faster than about 7.5 Hz. Steps,
    swings and turns live below it (a gait cycle is about 1 Hz, its strong harmonics up to 4 Hz);
    what is left is the shaking a viewer sees as jitter."""
    joints = np.asarray(joints, np.float64)
    if len(joints) < 3:
        return math.nan
    return mean_acceleration(_above_shake_band(joints))


def _above_shake_band(values: np.ndarray) -> np.ndarray:
    """The part of a time series (frames first) faster than about 7.5 Hz."""
    return values - ndimage.gaussian_filter1d(values, SHAKE_SIGMA, axis=0, mode="nearest")


def mean_acceleration(joints: np.ndarray) -> float:
    """Mean over frames and joints of the joints' acceleration (units/s^2), from positions (T, J, 3)."""
    return float((np.linalg.norm(np.diff(joints, n=2, axis=0), axis=-1) * FPS * FPS).mean())


def joint_accelerations(joints: np.ndarray) -> np.ndarray:
    """(T-2, J') accelerations (units/s^2) of the SNAP_JOINTS; row t is frame t + 1's."""
    return np.linalg.norm(np.diff(np.asarray(joints, np.float64)[:, SNAP_JOINTS], n=2, axis=0), axis=-1) * FPS * FPS


def worst_snaps(accelerations: np.ndarray, count: int = 3) -> list[tuple[int, str, float]]:
    """The `count` frames with the largest joint accelerations (`joint_accelerations`) above
    SNAP_ACCELERATION, worst first: (frame, joint, second difference in units)."""
    if not len(accelerations):
        return []
    peak = accelerations.max(axis=1)
    frames = [int(t) for t in np.argsort(-peak, kind="stable")[:count] if peak[t] > SNAP_ACCELERATION]
    return [(t + 1, JOINT_NAMES[SNAP_JOINTS[int(np.argmax(accelerations[t]))]], float(peak[t] / (FPS * FPS)))
            for t in frames]


# A network gliding: its pose frozen relative to the root (the joints' mean speed, less the root's
# velocity, under GLIDE_POSE_SPEED) while the root moves on (faster than GLIDE_ROOT_SPEED; the
# MANN glides at 40-80), both averaged over a quarter of a second, for at least GLIDE_SECONDS. A
# network without a phase can settle into a pose that reproduces itself while its trajectory
# carries it along: the character slides over the ground. A frozen pose that turns with the root
# moves relative to it and is not counted, so the share is a lower bound.
GLIDE_POSE_SPEED = 3.0     # units/s
GLIDE_ROOT_SPEED = 30.0    # units/s
GLIDE_SECONDS = 0.5


def gliding_share(joints_raw: np.ndarray, root: np.ndarray) -> float:
    """The share of frames (0 to 1) in which the network's raw pose (T, J, 3) glides with the
    root (T, 3): still relative to the root while the root moves, for GLIDE_SECONDS or longer."""
    joints_raw, root = np.asarray(joints_raw, np.float64), np.asarray(root, np.float64)
    if len(root) < 2:
        return math.nan
    local = joints_raw - root[:, None]
    pose_speed = ndimage.uniform_filter1d(np.linalg.norm(np.diff(local, axis=0), axis=-1).mean(axis=1) * FPS,
                                          FPS // 4, mode="nearest")
    root_speed = ndimage.uniform_filter1d(np.linalg.norm(np.diff(root[:, [0, 2]], axis=0), axis=-1) * FPS,
                                          FPS // 4, mode="nearest")
    gliding = (pose_speed < GLIDE_POSE_SPEED) & (root_speed > GLIDE_ROOT_SPEED)
    # Lengths of the runs of gliding frames: a frame counts when its run lasts GLIDE_SECONDS.
    edges = np.flatnonzero(np.diff(np.concatenate([[0], gliding.astype(np.int8), [0]])))
    runs = edges[1::2] - edges[::2]
    return float(runs[runs >= GLIDE_SECONDS * FPS].sum() / len(root))


def standing_foot_speed(recording: dict[str, np.ndarray]) -> float:
    """Mean speed (units/s) of heel and toe joints on frames where the stick has been released
    for at least STANDING_AFTER seconds; NaN when the script never stands that long."""
    released = np.linalg.norm(recording["stick"], axis=1) < 0.2
    # Frames since the last frame with the stick pressed (a running count of released frames).
    last_pressed = np.maximum.accumulate(np.where(released, -1, np.arange(len(released))))
    run = np.arange(len(released)) - last_pressed
    standing = run[1:] > int(STANDING_AFTER * FPS)
    if not standing.any():
        return math.nan
    feet = recording["joint_positions"][:, CONTACT_JOINTS].astype(np.float64)
    speed = np.linalg.norm(np.diff(feet, axis=0), axis=-1) * FPS
    return float(speed[standing].mean())


def wall_crossings(root: np.ndarray, walls: np.ndarray) -> int:
    """Steps of the root (x, z) that properly cross any wall's centre segment."""
    if len(walls) == 0 or len(root) < 2:
        return 0
    return int(steps_crossing_walls(walls, root[:-1, [0, 2]], root[1:, [0, 2]]).sum())


# A frame-to-frame change of the stick larger than this is a new command (a script's next segment,
# a flick); a scripted curve (move_turn) turns it by about 0.02 a frame.
STICK_JUMP = 0.1


def turn_time(recording: dict[str, np.ndarray]) -> float:
    """Mean seconds from each stick reversal until the root faces within 20 degrees of the new way.

    Only reversals without the strafe trigger count: strafing, the facing follows the camera and
    the stick asks for no turn. A turn is timed while the stick holds the reversed way (until it
    jumps, is released or strafes): one not finished by then counts the time the stick held, not
    the time until the facing happened to meet the way of some later command."""
    stick = np.asarray(recording["stick"], np.float64)
    strafing = recording["trigger"][:, 0] > 0.5
    length = np.linalg.norm(stick, axis=1)
    moving = length > 0.5
    turned = np.einsum("ij,ij->i", stick[1:], stick[:-1]) < -0.5 * length[1:] * length[:-1]
    reversals = np.flatnonzero(np.r_[False, moving[1:] & moving[:-1] & turned] & ~strafing)
    if not len(reversals):
        return math.nan
    jumped = np.r_[False, np.linalg.norm(np.diff(stick, axis=0), axis=1) > STICK_JUMP]
    changes = np.r_[np.flatnonzero(jumped | ~moving | strafing), len(stick)]
    held_until = changes[np.searchsorted(changes, reversals, side="right")]
    direction = recording["root_direction"][:, [0, 2]]
    target = recording["target_velocity"][:, [0, 2]]
    wanted = target / (np.linalg.norm(target, axis=1, keepdims=True) + 1e-9)
    facing = np.einsum("ij,ij->i", direction, wanted) > math.cos(math.radians(20))
    times = [(np.argmax(facing[start:end]) if facing[start:end].any() else end - start) / FPS
             for start, end in zip(reversals, held_until)]
    return float(np.mean(times))


def file_name(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text.replace(" @ ", "@"))


def snap_report(results: dict) -> str:
    """Lines naming the worst snapping frames of each case and network; where the play was
    recorded, how to look at the worst one."""
    lines = []
    for case, by_network in results.items():
        for label, values in by_network.items():
            snaps = values.get("worst snaps") or []
            if not snaps:
                continue
            where = ", ".join(f"frame {frame} ({joint}, {jump:.1f} units)" for frame, joint, jump in snaps)
            line = f"{case} / {label}: {int(values['snaps'])} snapping frames; worst {where}"
            if values.get("recording") is not None:
                line += f"\n    look: pfnn-demo screenshot snap.png --replay {values['recording']} --frame {snaps[0][0]}"
            lines.append(line)
    return "\n".join(lines) if lines else "no snapping frames"


# The quality bars a controller is held to against a yardstick network (the original PFNN), case
# by case: the project's issues set them. Each: (name, test of (yardstick's, candidate's metrics)
# -> the candidate's figure where it misses, else None).
STANDING_FEET_BAR = 1.0     # units/s


def _ratio_bar(metric: str, limit: float):
    def check(reference: dict, candidate: dict):
        a, b = reference[metric], candidate[metric]
        if not (math.isfinite(a) and math.isfinite(b)) or a <= 0:
            return None
        return f"{b / a:.2f}x" if b > limit * a else None
    return check


def _snap_bar(reference: dict, candidate: dict):
    allowed = max(1.5 * reference["snaps"], reference["snaps"] + 10)
    return f"{candidate['snaps']:.0f} frames (bar {allowed:.0f})" if candidate["snaps"] > allowed else None


def _tracking_bar(reference: dict, candidate: dict):
    a, b = reference["tracking"], candidate["tracking"]
    if not (math.isfinite(a) and math.isfinite(b) and b > a):
        return None
    # Where the stick pushes into a wall the character stops and the error is the whole asked
    # speed: a network that keeps closer to the stick in the open reaches the walls sooner and can
    # miss by that alone. The open-ground ratio beside the figure tells the two apart.
    open_a, open_b = reference.get("open tracking", math.nan), candidate.get("open tracking", math.nan)
    beside = f" (open ground {open_b / open_a:.3f}x)" if math.isfinite(open_a) and math.isfinite(open_b) and open_a > 0 else ""
    return f"{b / a:.3f}x{beside}"


def _standing_bar(reference: dict, candidate: dict):
    value = candidate["standing feet"]
    return f"{value:.2f} units/s" if math.isfinite(value) and value > STANDING_FEET_BAR else None


def _failure_bar(reference: dict, candidate: dict):
    problems = []
    if not candidate["completed"] >= 1.0:
        problems.append(f"failed at {100 * candidate['completed']:.0f} %")
    if candidate["wall crossings"] > 0:
        problems.append(f"{candidate['wall crossings']:.0f} wall crossings")
    return ", ".join(problems) or None


BARS = (("snaps", _snap_bar), ("jitter", _ratio_bar("jitter", 1.3)), ("foot skate", _ratio_bar("foot skate", 1.1)),
        ("turn time", _ratio_bar("turn time", 1.1)), ("tracking", _tracking_bar),
        ("standing feet", _standing_bar), ("failure", _failure_bar))
BARS_TEXT = ("snapping frames at most max(1.5x, +10), jitter at most 1.3x, foot skate at most 1.1x, turn time "
             "at most 1.1x, tracking no worse, standing feet at most 1 unit/s, no failure or wall crossing")


def missed_bars(reference: dict, candidate: dict) -> dict[str, str]:
    """{bar: the candidate's figure} for every bar the candidate's metrics miss against the reference's."""
    return {name: figure for name, check in BARS if (figure := check(reference, candidate)) is not None}


def bar_report(results: dict) -> str:
    """Every network after the first judged case by case against the first (the yardstick): how
    many cases miss a bar, by bar, and which cases miss what."""
    labels = list(next(iter(results.values())).keys())
    if len(labels) < 2:
        return ""
    reference = labels[0]
    lines = [f"Bars against {reference} ({BARS_TEXT}):"]
    for label in labels[1:]:
        misses = {case: missed_bars(by_network[reference], by_network[label]) for case, by_network in results.items()}
        missing = {case: bars for case, bars in misses.items() if bars}
        counts = {name: sum(name in bars for bars in missing.values()) for name, _ in BARS}
        summary = ", ".join(f"{name} {count}" for name, count in counts.items() if count)
        lines.append(f"  {label}: {len(missing)} of {len(results)} cases miss a bar" + (f" ({summary})" if summary else ""))
        for case, bars in missing.items():
            lines.append(f"    {case}: " + ", ".join(f"{name} {figure}" for name, figure in bars.items()))
    return "\n".join(lines)


SOURCES = ("raw pose", "phase alone", "inputs alone", "together")


class _NetworkIO:
    """Captures the first character's network input and phase on every frame."""

    def __init__(self):
        self.inputs, self.phases = [], []

    def capture(self, controller, controls) -> None:
        self.inputs.append(controller.crowd.last_input[0].copy())
        self.phases.append(controller.crowd.phase_used[0])


def shake_sources(network, scene, script: InputScript) -> dict[str, float]:
    """Where the shaking of a network's raw pose comes from, on one script (units/s^2, above
    about 7.5 Hz, joints in the root's frame). Its output changes from frame to frame because its
    inputs change and because the phase, which sets its weights, moves on. Replaying the recorded
    inputs and phases with one of them held for the frame-to-frame difference splits the raw
    pose's acceleration into the phase's part alone, the inputs' part alone and what the two do
    together. A network whose weights change too fast along the cycle shakes from the phase."""
    capture = _NetworkIO()
    controller = Controller(network, scene, starts=script.starts_in(scene))
    simulate(controller, script, script.frames, capture)
    if len(capture.inputs) < 8:
        return {source: math.nan for source in SOURCES}
    inputs = np.asarray(capture.inputs, np.float32)
    phases = np.asarray(capture.phases, np.float32)
    count = len(inputs) - 2

    def joints(input_offset: int, phase_offset: int) -> np.ndarray:
        """Joint positions (T-2, 31, 3) from inputs and phases shifted by 0-2 frames."""
        y = network.predict_batch(inputs[input_offset:input_offset + count], phases[phase_offset:phase_offset + count])
        return y[:, OUTPUT["joint_positions"]].astype(np.float64).reshape(count, -1, 3)

    centre = joints(1, 1)
    total = joints(2, 2) - 2 * centre + joints(0, 0)
    phase_alone = joints(1, 2) - 2 * centre + joints(1, 0)
    inputs_alone = joints(2, 1) - 2 * centre + joints(0, 1)

    def fast(acceleration: np.ndarray) -> float:
        return float(np.linalg.norm(_above_shake_band(acceleration), axis=-1).mean() * FPS * FPS)

    return {"raw pose": fast(total), "phase alone": fast(phase_alone), "inputs alone": fast(inputs_alone),
            "together": fast(total - phase_alone - inputs_alone)}


def sources_table(sources: dict) -> str:
    """{case: {network: shake_sources(...)}} as a markdown table."""
    lines = ["| script | network | " + " | ".join(SOURCES) + " |", "|" + "---|" * (2 + len(SOURCES))]
    for case, by_network in sources.items():
        for label, values in by_network.items():
            lines.append(f"| {case} | {label} | " + " | ".join(f"{values[s]:.0f}" for s in SOURCES) + " |")
    return "\n".join(lines)


def table(results: dict) -> str:
    labels = list(next(iter(results.values())).keys())
    header = "| script | metric | " + " | ".join(labels) + " |"
    lines = [header, "|" + "---|" * (2 + len(labels))]
    for script, by_network in results.items():
        for metric in METRICS:
            values = " | ".join(f"{by_network[label][metric]:.2f}" for label in labels)
            lines.append(f"| {script} | {metric} | {values} |")
    return "\n".join(lines)


def _short(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def plot(results: dict, folder: Path) -> list[Path]:
    """One bar chart per metric (networks side by side for every script, each bar with its
    value), as PNG."""
    import os

    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    if not pygame.font.get_init():
        pygame.font.init()
    font, small = pygame.font.Font(None, 20), pygame.font.Font(None, 16)
    folder.mkdir(parents=True, exist_ok=True)
    colours = [(70, 110, 200), (230, 140, 40), (60, 170, 90), (200, 60, 70)]
    scripts = list(results)
    labels = list(results[scripts[0]])
    written = []
    for metric in METRICS:
        values = np.array([[results[s][label][metric] for label in labels] for s in scripts], float)
        top = np.nanmax(values) if np.any(np.isfinite(values)) else 1.0
        width, height = max(140 * len(scripts) + 80, 160 * len(labels) + 20), 340
        surface = pygame.Surface((width, height))
        surface.fill((255, 255, 255))
        surface.blit(font.render(metric, True, (0, 0, 0)), (10, 8))
        for i, script in enumerate(scripts):
            for j, label in enumerate(labels):
                value = values[i, j]
                if not np.isfinite(value):
                    continue
                bar = int(210 * value / top) if top > 0 else 0
                x = 60 + 140 * i + 30 * j
                pygame.draw.rect(surface, colours[j % len(colours)], (x, 270 - bar, 26, bar))
                text = small.render(_short(value), True, (40, 40, 40))
                surface.blit(text, (x + 13 - text.get_width() // 2, 270 - bar - 13))
            surface.blit(font.render(script, True, (0, 0, 0)), (60 + 140 * i, 280))
        for j, label in enumerate(labels):        # the legend, in a row under the scripts
            pygame.draw.rect(surface, colours[j % len(colours)], (10 + 160 * j, 314, 12, 12))
            surface.blit(font.render(label[:18], True, (0, 0, 0)), (28 + 160 * j, 312))
        path = folder / (metric.replace(" ", "_") + ".png")
        pygame.image.save(surface, str(path))
        written.append(path)
    return written
