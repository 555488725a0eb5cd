"""Recordings of a simulation: per-frame arrays, saved as .npz (everything) or .bvh (the motion).

.npz keys (T frames, lengths in the demo's units of about 1 cm, y up):
  fps                    ()          frames per second (60)
  root_position          (T, 3)      trajectory frame 60 after the step's advance
  root_direction         (T, 3)      unit facing direction of the root
  joint_positions        (T, 31, 3)  world joint positions after foot IK (what is drawn)
  joint_positions_raw    (T, 31, 3)  the network's pose before IK
  joint_rotations        (T, 31, 3, 3) world joint rotations after IK
  contacts               (T, 4)      left heel, left toe, right heel, right toe, in [0, 1]
  phase                  (T,)        phase after the step, radians in [0, 2*pi)
  gait                   (T, 6)      stand, walk, jog, crouch, jump, bump at the current frame
  stick                  (T, 2)      left stick (x right, y forward) as given
  trigger                (T, 2)      left (strafe) and right (jog) triggers
  target_velocity        (T, 3)      the controller's smoothed target velocity
  trajectory_positions   (T, 12, 3)  the 12 trajectory samples of the network input (every 10th
  trajectory_directions  (T, 12, 3)  of the 120 frames: 6 past, the current one, 5 predicted),
  trajectory_gaits       (T, 12, 6)  world space on the terrain, after the step
  inputs                 (T, 13)     float64: the whole input of each step, columns INPUT_COLUMNS,
                                     with the camera's yaw and pitch as the step used them
  frame_mode             (T,)        network mode of each step, an index into mode_names (-1: a
                                     network without modes, such as a MANN)
  start_*                            the controller's state before the first step (Controller.state)
  joint_names, parents   (31,)       the skeleton; rest_offsets (31, 3) its rest offsets
  mode_names             (3,)        constant, linear, cubic
  scene, mode, network   ()          scene name, network mode at the start ("" where the network
                                     has none), network provenance
  network_kind           ()          the controller kind: pfnn, mann

A crowd of N characters (`run --characters N`) is recorded with a leading character axis: every
per-frame key above is (N, T, ...) instead of (T, ...), `inputs` (N, T, 13) (the others' rows hold
their stick, triggers, toggles and the yaw their stick is relative to), the start state's
per-character keys (N, ...), and `characters` () = N. Character 0 is the player. With N = 1 the
layout is the one above. `load_recording(path, character=k)` reads one character back in the
single layout, so `replay` and `run --replay-input` take `--member K`. A crowd's BVH export
writes the player to OUT.bvh and character k to OUT_k.bvh.

The inputs and the start state let `run --replay-input` drive the controller again and get the
same frames. BVH files carry the drawn motion only (see `motion.bvh_export`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from ..errors import PfnnError
from .input_state import InputState
from .npz_files import read_npz
from .phase_network import MODES
from .skeleton import JOINT_NAMES, PARENTS, REST_OFFSETS
from .trajectory import SAMPLE_FRAMES

FPS = 60
DEFAULT_RECORD_DIR = Path("pfnn-recordings")   # the window's recordings, in the folder it was started from
FORMATS = (".npz", ".bvh", ".glb")
INPUT_COLUMNS = ("move_x", "move_y", "look_x", "look_y", "strafe", "jog", "crouch", "ik", "responsive",
                 "debug", "zoom", "camera_yaw", "camera_pitch")
_PER_FRAME = ("root_position", "root_direction", "joint_positions", "joint_positions_raw", "joint_rotations",
              "contacts", "phase", "gait", "stick", "trigger", "target_velocity", "trajectory_positions",
              "trajectory_directions", "trajectory_gaits")


class RecordingError(PfnnError):
    """A recording that cannot be written or read."""


class Recorder:
    def __init__(self, controller=None):
        """With `controller`, the recording also keeps its state before the first step (for replays)."""
        self._frames: dict[str, list] = {key: [] for key in _PER_FRAME}
        self._inputs: list[np.ndarray] = []
        self._modes: list[str | None] = []
        self.network_kind = controller.network.kind if controller is not None else "pfnn"
        self.start_state = controller.state() if controller is not None else None

    def __len__(self) -> int:
        return len(self._frames["phase"])

    def capture(self, controller, controls: InputState) -> None:
        """Keep the frame `controller` has just stepped to with `controls` (the player's input);
        with a crowd, every character's frame (the others' inputs from the controls it stepped with)."""
        crowd, rows, frames = controller.crowd, controller.last_controls, self._frames
        trajectory = crowd.trajectory
        frames["root_position"].append(crowd.root_positions)
        frames["root_direction"].append(crowd.root_directions)
        frames["joint_positions"].append(crowd.joint_positions_final.copy())
        frames["joint_positions_raw"].append(np.array(crowd.joint_positions_raw, np.float32))
        frames["joint_rotations"].append(crowd.global_transforms[..., :3, :3].copy())
        frames["contacts"].append(crowd.contacts.copy())
        frames["phase"].append(crowd.phase.copy())
        frames["gait"].append(crowd.gaits)
        frames["stick"].append(rows.move.copy())
        frames["trigger"].append(np.stack([rows.strafe, rows.jog], axis=1))
        frames["target_velocity"].append(crowd.target_velocity.copy())
        frames["trajectory_positions"].append(trajectory.positions[:, SAMPLE_FRAMES].copy())
        frames["trajectory_directions"].append(trajectory.directions[:, SAMPLE_FRAMES].copy())
        frames["trajectory_gaits"].append(trajectory.gaits[:, SAMPLE_FRAMES].copy())
        inputs = np.zeros((crowd.count, len(INPUT_COLUMNS)))
        inputs[:, 0:2], inputs[:, 4], inputs[:, 5] = rows.move, rows.strafe, rows.jog
        inputs[:, 6], inputs[:, 7], inputs[:, 8], inputs[:, 11] = rows.crouch, rows.ik, rows.responsive, rows.camera_yaw
        camera = controller.camera
        inputs[0] = (controls.move_x, controls.move_y, controls.look_x, controls.look_y, controls.strafe,
                     controls.jog, controls.crouch, controls.ik, controls.responsive, controls.debug,
                     controls.zoom, camera.yaw, camera.pitch)
        self._inputs.append(inputs)
        self._modes.append(controller.network.mode)
        self.network_kind = controller.network.kind

    def arrays(self) -> dict[str, np.ndarray]:
        """Per-frame arrays (T, ...) of one character, or (N, T, ...) of a crowd of N."""
        arrays = {key: np.asarray(values, np.float32) for key, values in self._frames.items()}
        arrays["inputs"] = np.asarray(self._inputs, np.float64).reshape(len(self), -1, len(INPUT_COLUMNS))
        characters = arrays["inputs"].shape[1] if len(self) else 1
        for key in _PER_FRAME + ("inputs",):
            arrays[key] = arrays[key][:, 0] if characters == 1 else np.swapaxes(arrays[key], 0, 1)
        arrays["frame_mode"] = np.asarray([MODES.index(mode) if mode in MODES else -1 for mode in self._modes], np.int8)
        if characters > 1:
            arrays["characters"] = np.int32(characters)
        return arrays

    @property
    def first_mode(self) -> str:
        return (self._modes[0] or "") if self._modes else ""

    def save(self, path: str | Path, scene: str, mode: str, network: str, body=None) -> Path:
        """Write the recording; the file's extension chooses the format: .npz (everything), .bvh
        (the motion on the 31-joint skeleton), .glb (a glTF animation of `body`, a
        `motion.gltf_export` body such as a user's rig; the mannequin by default)."""
        path = Path(path)
        suffix = _format(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = self.arrays()
        try:
            if suffix == ".glb":
                from ..motion.gltf_export import write_gltf

                rotations = arrays["joint_rotations"]
                drawn = np.zeros(rotations.shape[:-2] + (4, 4), np.float32)
                drawn[..., :3, :3], drawn[..., :3, 3], drawn[..., 3, 3] = rotations, arrays["joint_positions"], 1.0
                write_gltf(path, drawn, FPS, body)
            elif suffix == ".bvh":
                from ..motion.bvh import write_bvh
                from ..motion.bvh_export import motion_from_world

                positions, rotations = arrays["joint_positions"], arrays["joint_rotations"]
                if "characters" not in arrays:
                    write_bvh(motion_from_world(positions, rotations, 1.0 / FPS), path)
                else:   # a crowd: the player in PATH, character k in PATH's name + "_k"
                    for k in range(len(positions)):
                        write_bvh(motion_from_world(positions[k], rotations[k], 1.0 / FPS), crowd_bvh_path(path, k))
            else:
                start = {f"start_{key}": value for key, value in (self.start_state or {}).items()}
                np.savez_compressed(path, fps=np.int32(FPS), joint_names=np.array(JOINT_NAMES), parents=PARENTS,
                                    mode_names=np.array(MODES),
                                    rest_offsets=REST_OFFSETS, scene=np.str_(scene), mode=np.str_(mode),
                                    network=np.str_(network), network_kind=np.str_(self.network_kind),
                                    **arrays, **start)
        except OSError as error:
            raise RecordingError(f"cannot write the recording ({error.strerror or error})", path) from None
        return path


def crowd_bvh_path(path: Path, character: int) -> Path:
    """Where a crowd recording's BVH for `character` goes: PATH for the player, NAME_k.bvh beside it."""
    return path if character == 0 else path.with_name(f"{path.stem}_{character}{path.suffix}")


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise RecordingError(f"unknown recording format {suffix or '(no extension)'!r}; "
                             "end the name in .npz (everything), .bvh (the motion) or .glb (a glTF animation)", path)
    return suffix


def check_destination(path: str | Path, suffixes: tuple[str, ...] | None = FORMATS) -> Path:
    """Refuse, before any work, a destination that cannot be written: wrong extension, a folder,
    a parent that is a file, a read-only place. Creates nothing and leaves what is there as it is."""
    path = Path(path)
    if suffixes is not None and path.suffix.lower() not in suffixes:
        raise RecordingError(f"the file name must end in {' or '.join(suffixes)}", path)
    if path.is_dir():
        raise RecordingError("is a folder; give a file name", path)
    folder = path.parent
    while not folder.exists():       # the nearest existing folder decides (missing ones are created)
        folder = folder.parent
    if not folder.is_dir():
        raise RecordingError(f"cannot be written: {folder} is a file, not a folder", path)
    import tempfile

    try:
        if path.exists():
            with open(path, "ab"):
                pass
        else:
            with tempfile.TemporaryFile(dir=folder):
                pass
    except OSError as error:
        raise RecordingError(f"cannot be written ({error.strerror or error})", path) from None
    return path


@dataclasses.dataclass
class Recording:
    """A recording read back: per-frame arrays plus what the file says about itself."""

    path: Path
    arrays: dict[str, np.ndarray]
    scene: str | None
    mode: str | None
    network: str | None

    @property
    def frames(self) -> int:
        return len(self.arrays["joint_positions"])

    @property
    def start_state(self) -> dict[str, np.ndarray] | None:
        state = {key[len("start_"):]: value for key, value in self.arrays.items() if key.startswith("start_")}
        return state or None

    def input_state(self, frame: int) -> InputState:
        """The input of step `frame`, with the camera pinned where the recorded step had it."""
        row = self.arrays["inputs"][frame]
        values = dict(zip(INPUT_COLUMNS, (float(v) for v in row)))
        for flag in ("crouch", "ik", "responsive", "debug"):
            values[flag] = bool(values[flag])
        return InputState(**values)

    def global_transforms(self) -> np.ndarray:
        """(T, 31, 4, 4) drawn world transforms."""
        positions, rotations = self.arrays["joint_positions"], self.arrays["joint_rotations"]
        transforms = np.zeros(positions.shape[:2] + (4, 4), np.float32)
        transforms[..., :3, :3] = rotations
        transforms[..., :3, 3] = positions
        transforms[..., 3, 3] = 1.0
        return transforms


def load_recording(path: str | Path, bvh_scale: float = 1.0, character: int | None = None) -> Recording:
    """Read a .npz recording or a BVH clip on the 31-joint skeleton (in the demo's units unless
    `bvh_scale` says otherwise, e.g. 5.6444 for CMU clips). A crowd's recording gives the
    character `character` (0 is the player)."""
    path = Path(path)
    suffix = _format(path)
    if not path.is_file():
        raise RecordingError("no such recording", path)
    if suffix == ".glb":
        raise RecordingError("a glTF animation is for other tools (Blender, engines); replay the .npz of the "
                             "same run", path)
    if suffix == ".bvh":
        from ..motion.bvh import read_bvh

        motion = read_bvh(path)
        if list(motion.names) != list(JOINT_NAMES):
            raise RecordingError("the BVH hierarchy is not the 31-joint one the character is built on", path)
        world = motion.global_transforms(bvh_scale).astype(np.float32)
        arrays = {"joint_positions": world[..., :3, 3], "joint_rotations": world[..., :3, :3],
                  "frame_time": np.float64(motion.frame_time)}
        return Recording(path, arrays, None, None, None)
    arrays = read_npz(path, RecordingError, "recording")
    missing = [key for key in ("joint_positions", "joint_rotations") if key not in arrays]
    if missing:
        raise RecordingError(f"is not a pfnn-demo recording (no {', '.join(missing)})", path)
    if "characters" in arrays:
        arrays = _one_character(arrays, character, path)
    if arrays["joint_positions"].ndim != 3 or arrays["joint_positions"].shape[1:] != (len(JOINT_NAMES), 3):
        raise RecordingError(f"joint_positions has shape {arrays['joint_positions'].shape}, expected (T, 31, 3)", path)
    frames = len(arrays["joint_positions"])
    uneven = [key for key in _PER_FRAME + ("inputs", "frame_mode") if key in arrays and len(arrays[key]) != frames]
    if uneven or frames == 0 or not np.all(np.isfinite(arrays["joint_positions"])):
        problem = f"{', '.join(uneven)} do not have one row per frame" if uneven else "no frames or non-finite joints"
        raise RecordingError(f"is damaged: {problem}", path)
    arrays["frame_time"] = np.float64(1.0 / float(arrays.get("fps", FPS)))
    text = {key: str(arrays.pop(key)) if key in arrays else None for key in ("scene", "mode", "network")}
    return Recording(path, arrays, text["scene"], text["mode"], text["network"])


def _one_character(arrays: dict[str, np.ndarray], character: int | None, path: Path) -> dict[str, np.ndarray]:
    """Character `character`'s arrays of a crowd recording, in a single character's layout."""
    count = int(arrays.pop("characters"))
    if character is None:
        raise RecordingError(f"holds a crowd of {count} characters: choose one with --member K "
                             f"(0 is the player, up to {count - 1})", path)
    if not 0 <= character < count:
        raise RecordingError(f"has characters 0 to {count - 1}, not {character}", path)
    out = {}
    for key, value in arrays.items():
        name = key[len("start_"):] if key.startswith("start_") else key
        per_character = key in _PER_FRAME or key == "inputs" or (key.startswith("start_") and name not in _SHARED_STATE)
        if per_character and (value.ndim == 0 or len(value) != count):
            raise RecordingError(f"is damaged: {key} does not have one entry per character", path)
        out[key] = value[character] if per_character else value
    return out


_SHARED_STATE = ("frame", "camera", "camera_target")


class RecordedInput:
    """A .npz recording's inputs as a script: `state(frame)` and `mode(frame)` of each recorded step,
    and `prepare(controller)`, which puts back the state the recording started from."""

    def __init__(self, recording: Recording, ik: bool = True):
        if "inputs" not in recording.arrays or "frame_mode" not in recording.arrays:
            raise RecordingError("holds no inputs (a BVH, or a recording from an older pfnn-demo): it can be "
                                 "watched with `pfnn-demo replay` but not played through the simulation",
                                 recording.path)
        self.recording = recording
        self.frames = recording.frames
        self._ik = ik

    def without_ik(self) -> "RecordedInput":
        return RecordedInput(self.recording, ik=False)

    def state(self, frame: int) -> InputState:
        state = self.recording.input_state(min(frame, self.frames - 1))
        state.ik = state.ik and self._ik
        return state

    def mode(self, frame: int) -> str | None:
        """The network mode frame `frame` was played in; None for a network without modes."""
        names = [str(name) for name in self.recording.arrays.get("mode_names", MODES)]
        index = int(self.recording.arrays["frame_mode"][min(frame, self.frames - 1)])
        if index == -1:
            return None
        if not 0 <= index < len(names) or names[index] not in MODES:
            raise RecordingError(f"frame {frame} names an unknown network mode ({index})", self.recording.path)
        return names[index]

    def prepare(self, controller) -> None:
        """Start from the recorded state (a recording started mid-play), or from the scene's start."""
        start = self.recording.start_state
        if start is not None:
            try:
                controller.restore(start)
            except (KeyError, ValueError) as error:
                raise RecordingError(f"its start state is damaged ({error})", self.recording.path) from None
        if controller.network.modes and self.mode(0) is not None:
            controller.network.set_mode(self.mode(0))

