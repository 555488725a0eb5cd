"""A virtual game controller on pygame's own SDL (SDL_JoystickAttachVirtual through ctypes)."""

from __future__ import annotations

import ctypes
import glob
import os

import pygame

SDL_JOYSTICK_TYPE_GAMECONTROLLER = 1
AXES = {"leftx": 0, "lefty": 1, "rightx": 2, "righty": 3, "lefttrigger": 4, "righttrigger": 5}
BUTTONS = {"a": 0, "b": 1, "x": 2, "y": 3, "back": 4, "guide": 5, "start": 6, "leftstick": 7, "rightstick": 8,
           "leftshoulder": 9, "rightshoulder": 10, "dpup": 11, "dpdown": 12, "dpleft": 13, "dpright": 14}


def _sdl_library():
    folder = os.path.join(os.path.dirname(pygame.__file__), os.pardir, "pygame.libs")
    candidates = sorted(glob.glob(os.path.join(folder, "libSDL2-2*")))
    if candidates:
        return ctypes.CDLL(candidates[0])
    return ctypes.CDLL("libSDL2-2.0.so.0")   # a pygame built against the system SDL


class VirtualGamepad:
    def __init__(self):
        pygame.joystick.init()
        self.sdl = sdl = _sdl_library()
        sdl.SDL_JoystickAttachVirtual.restype = ctypes.c_int
        sdl.SDL_JoystickOpen.restype = ctypes.c_void_p
        sdl.SDL_JoystickSetVirtualAxis.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int16]
        sdl.SDL_JoystickSetVirtualButton.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint8]
        sdl.SDL_JoystickClose.argtypes = [ctypes.c_void_p]
        sdl.SDL_GetError.restype = ctypes.c_char_p
        self.index = sdl.SDL_JoystickAttachVirtual(SDL_JOYSTICK_TYPE_GAMECONTROLLER, 6, 15, 0)
        if self.index < 0:
            raise RuntimeError(f"SDL_JoystickAttachVirtual failed: {sdl.SDL_GetError().decode()}")
        self.joystick = sdl.SDL_JoystickOpen(self.index)
        # A virtual joystick's axes span -32768..32767 and SDL maps that whole range onto a
        # trigger's 0..32767, so a released trigger sits at -32768 (as on XInput pads).
        for name in ("lefttrigger", "righttrigger"):
            self.axis(name, -32768)

    def axis(self, name: str, value: int) -> None:
        self.sdl.SDL_JoystickSetVirtualAxis(self.joystick, AXES[name], int(value))
        self.sdl.SDL_JoystickUpdate()

    def button(self, name: str, down: bool) -> None:
        self.sdl.SDL_JoystickSetVirtualButton(self.joystick, BUTTONS[name], 1 if down else 0)
        self.sdl.SDL_JoystickUpdate()

    def detach(self) -> None:
        if self.joystick:
            self.sdl.SDL_JoystickClose(self.joystick)
            self.joystick = None
        self.sdl.SDL_JoystickDetachVirtual(self.index)
