"""Gamepads (SDL GameController API) and the keyboard/mouse, turned into an InputState per frame.

The window drains SDL's event queue, so pads are polled: every frame the pad list is checked
for hot-plugs and the buttons are compared with the previous frame to find presses.
"""

from __future__ import annotations

import dataclasses
import os

# Hints must be set before SDL starts: Nintendo pads map by position (A is the bottom button),
# and pad input keeps arriving when the window is not focused.
os.environ.setdefault("SDL_GAMECONTROLLER_USE_BUTTON_LABELS", "0")
os.environ.setdefault("SDL_JOYSTICK_ALLOW_BACKGROUND_EVENTS", "1")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402
from pygame._sdl2 import controller as sdl_controller  # noqa: E402

from ..sim.input_state import InputState  # noqa: E402

AXIS_SCALE = 32768.0
MOUSE_TURN = 0.005        # radians of camera yaw/pitch per pixel dragged
KEY_TURN = 1.0            # orbit keys act as a fully tilted right stick


@dataclasses.dataclass
class Toggles:
    crouch: bool = False
    ik: bool = True
    responsive: bool = False
    debug: bool = True


class Gamepad:
    """The first game controller SDL knows, re-found whenever pads come and go."""

    BUTTONS = ("a", "b", "x", "y", "back", "start", "leftshoulder", "rightshoulder",
               "dpup", "dpdown", "dpleft", "dpright")

    def __init__(self):
        self.pad = None
        self.name = ""
        self._previous = {name: False for name in self.BUTTONS}
        self._count = -1
        self._ready = False

    def _ensure_init(self) -> None:
        if not self._ready:
            pygame.joystick.init()
            sdl_controller.init()
            self._ready = True

    def poll(self) -> str | None:
        """Find pads plugged in or lost since the last frame; return a note for the screen, if any."""
        self._ensure_init()
        if pygame.display.get_init():
            pygame.event.pump()   # lets SDL notice devices; queued events stay for the window
        note = None
        if self.pad is not None and not self.pad.attached():
            note = f"Gamepad lost: {self.name}"
            self._close()
        count = pygame.joystick.get_count()
        if self.pad is None and count != self._count:
            for index in range(count):
                if sdl_controller.is_controller(index):
                    try:
                        self.pad = sdl_controller.Controller(index)
                    except pygame.error:
                        continue
                    self.name = sdl_controller.name_forindex(index) or "gamepad"
                    self._previous = {name: True for name in self.BUTTONS}  # no press on connect
                    note = f"Gamepad connected: {self.name}"
                    break
        self._count = count
        return note

    def _close(self) -> None:
        try:
            self.pad.quit()
        except pygame.error:
            pass
        self.pad = None
        self._count = -1

    def read(self) -> tuple[dict[str, float], set[str]] | None:
        """Axes (sticks in [-1, 1] with y up, triggers in [0, 1]) and buttons pressed this frame."""
        if self.pad is None:
            return None
        try:
            get_axis, get_button = self.pad.get_axis, self.pad.get_button
            axes = {
                "move_x": get_axis(pygame.CONTROLLER_AXIS_LEFTX) / AXIS_SCALE,
                "move_y": -get_axis(pygame.CONTROLLER_AXIS_LEFTY) / AXIS_SCALE,
                "look_x": get_axis(pygame.CONTROLLER_AXIS_RIGHTX) / AXIS_SCALE,
                "look_y": -get_axis(pygame.CONTROLLER_AXIS_RIGHTY) / AXIS_SCALE,
                "strafe": max(get_axis(pygame.CONTROLLER_AXIS_TRIGGERLEFT), 0) / 32767.0,
                "jog": max(get_axis(pygame.CONTROLLER_AXIS_TRIGGERRIGHT), 0) / 32767.0,
            }
            held = {name: bool(get_button(getattr(pygame, f"CONTROLLER_BUTTON_{_SDL_NAME[name]}")))
                    for name in self.BUTTONS}
        except pygame.error:   # unplugged between poll and read
            self._close()
            return None
        pressed = {name for name, down in held.items() if down and not self._previous[name]}
        self._previous = held
        self._held = held
        return axes, pressed

    def held(self, name: str) -> bool:
        return self.pad is not None and getattr(self, "_held", {}).get(name, False)


_SDL_NAME = {"a": "A", "b": "B", "x": "X", "y": "Y", "back": "BACK", "start": "START",
             "leftshoulder": "LEFTSHOULDER", "rightshoulder": "RIGHTSHOULDER", "dpup": "DPAD_UP",
             "dpdown": "DPAD_DOWN", "dpleft": "DPAD_LEFT", "dpright": "DPAD_RIGHT"}


class Keyboard:
    """Keys held, from key events; the pygame key codes that moderngl-window's pygame window passes on."""

    MOVE = {pygame.K_w: (0, 1), pygame.K_UP: (0, 1), pygame.K_s: (0, -1), pygame.K_DOWN: (0, -1),
            pygame.K_a: (-1, 0), pygame.K_LEFT: (-1, 0), pygame.K_d: (1, 0), pygame.K_RIGHT: (1, 0)}
    ORBIT = {pygame.K_j: (-1, 0), pygame.K_l: (1, 0), pygame.K_i: (0, 1), pygame.K_k: (0, -1)}

    def __init__(self):
        self.down: set[int] = set()

    def move(self) -> tuple[float, float]:
        x = sum(self.MOVE[k][0] for k in self.down if k in self.MOVE)
        y = sum(self.MOVE[k][1] for k in self.down if k in self.MOVE)
        x, y = max(-1, min(1, x)), max(-1, min(1, y))
        norm = (x * x + y * y) ** 0.5
        return (x / norm, y / norm) if norm > 1 else (float(x), float(y))

    def orbit(self) -> tuple[float, float]:
        x = sum(self.ORBIT[k][0] for k in self.down if k in self.ORBIT)
        y = sum(self.ORBIT[k][1] for k in self.down if k in self.ORBIT)
        return KEY_TURN * max(-1, min(1, x)), KEY_TURN * max(-1, min(1, y))

    @property
    def jog(self) -> float:
        return 1.0 if self.down & {pygame.K_LSHIFT, pygame.K_RSHIFT} else 0.0

    @property
    def strafe(self) -> float:
        return 1.0 if pygame.K_q in self.down else 0.0

    @property
    def zoom(self) -> float:
        return float((pygame.K_MINUS in self.down or pygame.K_KP_MINUS in self.down)
                     - (pygame.K_EQUALS in self.down or pygame.K_PLUS in self.down or pygame.K_KP_PLUS in self.down))


class PlayerInput:
    """Merges the pad and the keyboard into one InputState; owns the toggles both can flip."""

    def __init__(self):
        self.gamepad = Gamepad()
        self.keyboard = Keyboard()
        self.toggles = Toggles()
        self.wheel_zoom = 0.0

    def gameplay_buttons(self, pressed: set[str]) -> None:
        """The original mapping: B crouch, X debug, Back responsive, Start IK."""
        if "b" in pressed:
            self.toggles.crouch = not self.toggles.crouch
        if "x" in pressed:
            self.toggles.debug = not self.toggles.debug
        if "back" in pressed:
            self.toggles.responsive = not self.toggles.responsive
        if "start" in pressed:
            self.toggles.ik = not self.toggles.ik

    def state(self, pad_axes: dict[str, float] | None) -> InputState:
        keyboard = self.keyboard
        move_x, move_y = keyboard.move()
        look_x, look_y = keyboard.orbit()
        strafe, jog = keyboard.strafe, keyboard.jog
        zoom = keyboard.zoom + self.wheel_zoom
        if pad_axes is not None:
            if abs(pad_axes["move_x"]) + abs(pad_axes["move_y"]) > abs(move_x) + abs(move_y):
                move_x, move_y = pad_axes["move_x"], pad_axes["move_y"]
            if abs(pad_axes["look_x"]) + abs(pad_axes["look_y"]) > abs(look_x) + abs(look_y):
                look_x, look_y = pad_axes["look_x"], pad_axes["look_y"]
            strafe, jog = max(strafe, pad_axes["strafe"]), max(jog, pad_axes["jog"])
            # Left shoulder zooms in, right shoulder out.
            zoom += float(self.gamepad.held("rightshoulder")) - float(self.gamepad.held("leftshoulder"))
        self.wheel_zoom = 0.0
        toggles = self.toggles
        return InputState(move_x=move_x, move_y=move_y, look_x=look_x, look_y=look_y, strafe=strafe, jog=jog,
                          crouch=toggles.crouch, ik=toggles.ik, responsive=toggles.responsive,
                          debug=toggles.debug, zoom=max(-3.0, min(3.0, zoom)))
