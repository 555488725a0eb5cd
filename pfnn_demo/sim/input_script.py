"""Input scripts: a human-writable JSON timeline that drives the simulation like a player would.

    {
      "description": "walk forward, then jog, then stop",
      "scene": "plaza",          (optional: the scene it was written for; `eval` plays it there)
      "start": [0, 0],           (optional: where it starts in that scene, x and z)
      "segments": [
        {"duration": 1.0, "label": "stand still"},
        {"duration": 4.0, "move": [0, 1]},
        {"duration": 3.0, "move": [0, 1], "jog": 1.0},
        {"duration": 2.0, "move": [0, 1], "move_turn": 180},
        {"duration": 2.0}
      ]
    }

Each segment lasts `duration` seconds (at 60 frames per second) and states the whole input for
that time; anything it leaves out takes its default:

    move [x, y]      left stick, x right, y forward, each in [-1, 1]       default [0, 0]
    move_turn deg    rotate the move direction by this many degrees over the segment (+ = left)
    look [x, y]      right stick: turns (x) and tilts (y) the camera       default [0, 0]
    strafe           left trigger in [0, 1]: face the camera direction     default 0
    jog              right trigger in [0, 1]: faster, and jog instead of walk  default 0
    crouch, ik, responsive, debug   true/false                         defaults false, true, false, true
    zoom             camera distance change in [-1, 1]                     default 0
    camera_yaw, camera_pitch   pin the camera (degrees) for the segment      default: free
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np

from ..errors import ScriptError
from .input_state import InputState
from ..resources import data_dir

FPS = 60
_FIELDS = {"duration", "label", "move", "move_turn", "look", "strafe", "jog", "crouch", "ik", "responsive",
           "debug", "zoom", "camera_yaw", "camera_pitch"}


@dataclasses.dataclass
class Segment:
    frames: int
    state: InputState
    move_turn: float = 0.0   # radians over the segment
    label: str = ""


def _numbers(value, key: str, where: str, form: str = "[x, y]") -> tuple[float, float]:
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
        raise ScriptError(f"{where}: '{key}' must be {form} numbers")
    return float(value[0]), float(value[1])


def _pair(value, key: str, where: str) -> tuple[float, float]:
    x, y = _numbers(value, key, where)
    if not (-1 <= x <= 1 and -1 <= y <= 1):
        raise ScriptError(f"{where}: '{key}' values must lie in [-1, 1], got {value}")
    return x, y


def _number(spec: dict, key: str, where: str, default: float, low: float, high: float) -> float:
    value = spec.get(key, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise ScriptError(f"{where}: '{key}' must be a number")
    if not low <= value <= high:
        raise ScriptError(f"{where}: '{key}' must lie in [{low}, {high}], got {value}")
    return float(value)


def _flag(spec: dict, key: str, where: str, default: bool) -> bool:
    value = spec.get(key, default)
    if not isinstance(value, bool):
        raise ScriptError(f"{where}: '{key}' must be true or false")
    return value


def parse_segment(spec, index: int) -> Segment:
    where = f"segment {index + 1}"
    if not isinstance(spec, dict):
        raise ScriptError(f"{where}: must be an object")
    unknown = set(spec) - _FIELDS
    if unknown:
        raise ScriptError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}; "
                          f"known: {', '.join(sorted(_FIELDS))}")
    if "duration" not in spec:
        raise ScriptError(f"{where}: missing 'duration' (seconds)")
    duration = _number(spec, "duration", where, 0, 0, 24 * 3600)
    move = _pair(spec.get("move", [0, 0]), "move", where)
    look = _pair(spec.get("look", [0, 0]), "look", where)
    infinite = float("inf")
    yaw = spec.get("camera_yaw")
    pitch = spec.get("camera_pitch")
    state = InputState(
        move_x=move[0], move_y=move[1], look_x=look[0], look_y=look[1],
        strafe=_number(spec, "strafe", where, 0.0, 0.0, 1.0),
        jog=_number(spec, "jog", where, 0.0, 0.0, 1.0),
        crouch=_flag(spec, "crouch", where, False), ik=_flag(spec, "ik", where, True),
        responsive=_flag(spec, "responsive", where, False), debug=_flag(spec, "debug", where, True),
        zoom=_number(spec, "zoom", where, 0.0, -1.0, 1.0),
        camera_yaw=None if yaw is None else math.radians(_number(spec, "camera_yaw", where, 0, -infinite, infinite)),
        camera_pitch=None if pitch is None else math.radians(_number(spec, "camera_pitch", where, 0, -90, 90)),
    )
    turn = math.radians(_number(spec, "move_turn", where, 0.0, -infinite, infinite))
    return Segment(frames=round(duration * FPS), state=state, move_turn=turn, label=str(spec.get("label", "")))


class InputScript:
    """A parsed script: `state(frame)` gives the input of any frame; past the end, the last segment's."""

    def __init__(self, segments: list[Segment], description: str = "", name: str = "", scene: str = "",
                 start: tuple[float, float] | None = None):
        if not segments:
            raise ScriptError("a script needs at least one segment", name or None)
        self.segments = segments
        self.description = description
        self.name = name
        self.scene = scene      # the scene the script was written for ("" = any)
        self.start = start      # (x, z) where it starts in that scene (None = the scene's start)
        self._starts = []
        total = 0
        for segment in segments:
            self._starts.append(total)
            total += segment.frames
        self.frames = total

    @classmethod
    def from_dict(cls, spec, name: str = "") -> "InputScript":
        if not isinstance(spec, dict) or not isinstance(spec.get("segments"), list):
            raise ScriptError("a script is an object with a 'segments' list", name or None)
        try:
            segments = [parse_segment(item, i) for i, item in enumerate(spec["segments"])]
        except ScriptError as error:
            raise ScriptError(error.detail, name or None) from None
        scene = spec.get("scene", "")
        if not isinstance(scene, str):
            raise ScriptError("'scene' must be a scene name", name or None)
        start = spec.get("start")
        if start is not None:
            try:
                start = _numbers(start, "start", "the script", "[x, z]")
            except ScriptError as error:
                raise ScriptError(error.detail, name or None) from None
        return cls(segments, str(spec.get("description", "")), name, scene, start)

    @classmethod
    def load(cls, path: str | Path) -> "InputScript":
        path = resolve_script_path(path)
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ScriptError(f"not valid JSON ({error})", path) from None
        return cls.from_dict(spec, str(path))

    def without_ik(self) -> "InputScript":
        """The same script with foot IK off throughout."""
        segments = [dataclasses.replace(segment, state=dataclasses.replace(segment.state, ik=False))
                    for segment in self.segments]
        return InputScript(segments, self.description, self.name, self.scene, self.start)

    def starts_in(self, scene) -> "np.ndarray | None":
        """(1, 2) start position for a Controller in `scene`: the script's own where it was
        written for this scene, else None (the scene's start)."""
        if self.start is None or (self.scene and self.scene != scene.name):
            return None
        return np.array([self.start], np.float32)

    def state(self, frame: int) -> InputState:
        index = len(self._starts) - 1
        while index > 0 and self._starts[index] > frame:
            index -= 1
        segment = self.segments[index]
        state = dataclasses.replace(segment.state)
        if segment.move_turn and segment.frames:
            progress = min(max((frame - self._starts[index]) / segment.frames, 0.0), 1.0)
            angle = segment.move_turn * progress
            c, s = math.cos(angle), math.sin(angle)
            # Positive turns rotate the stick direction counter-clockwise (forward turns left).
            state.move_x, state.move_y = c * state.move_x - s * state.move_y, s * state.move_x + c * state.move_y
        return state


def example_scripts() -> dict[str, Path]:
    return {path.stem: path for path in sorted(data_dir("scripts").glob("*.json"))}


def resolve_script_path(path: str | Path) -> Path:
    """A file path, or the name of a shipped example script (e.g. `walk_circle`)."""
    candidate = Path(path)
    if candidate.is_file():
        return candidate
    examples = example_scripts()
    if str(path) in examples:
        return examples[str(path)]
    raise ScriptError(f"no such script file; the example scripts are: {', '.join(examples)}", candidate)
