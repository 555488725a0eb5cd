"""What the player asks for in one frame, filled by a gamepad, the keyboard or a script.

Sticks are in [-1, 1] with x to the right and y forward/up; triggers in [0, 1]. The toggles are
levels (the device layer turns button presses into flips), so a script can state them directly.
"""

from __future__ import annotations

import dataclasses

# The original's dead zone: |x| + |y| < 10000 raw SDL units (of 32768) zeroes both axes.
STICK_DEAD_ZONE = 10000 / 32768


@dataclasses.dataclass
class InputState:
    move_x: float = 0.0      # left stick: movement, camera-relative
    move_y: float = 0.0
    look_x: float = 0.0      # right stick: camera yaw / pitch
    look_y: float = 0.0
    strafe: float = 0.0      # left trigger: face the camera direction
    jog: float = 0.0         # right trigger: speed, and walk -> jog
    crouch: bool = False
    ik: bool = True
    responsive: bool = False
    debug: bool = True
    zoom: float = 0.0        # camera distance change: +1 moves away, -1 closer (per 1/60 s: 20 units)
    camera_yaw: float | None = None    # absolute camera settings, when a script pins them
    camera_pitch: float | None = None

    @staticmethod
    def dead_zone(x: float, y: float) -> tuple[float, float]:
        return (0.0, 0.0) if abs(x) + abs(y) < STICK_DEAD_ZONE else (x, y)

    @classmethod
    def from_sdl_axes(cls, axes, **toggles) -> "InputState":
        """From the six raw SDL joystick axes of the original demo (triggers rest at -32768, stick up < 0)."""
        lx, ly, rx, ry, lt, rt = (float(a) for a in axes)
        return cls(move_x=lx / 32768, move_y=-ly / 32768, look_x=rx / 32768, look_y=-ry / 32768,
                   strafe=(lt / 32768 + 1) / 2, jog=(rt / 32768 + 1) / 2, **toggles)
