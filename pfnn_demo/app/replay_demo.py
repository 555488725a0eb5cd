"""The replay window's logic, apart from any window: a recording played with pause, frame
stepping, speed control, orbit camera and debug views. Same interface as `Demo`, so the window
app and offscreen tests drive either."""

from __future__ import annotations

from ..sim.camera import PITCH_MAX, PITCH_MIN
from .devices import MOUSE_TURN, Gamepad, Keyboard, pygame
from .playback import Playback
from .render.renderer import Renderer, ViewOptions
from .render.replay_hud import ReplayHud

HELP = "Space pause   < > step   [ ] speed   Home restart   F1 debug   F3 contacts   Esc quit"


class ReplayDemo:
    def __init__(self, ctx, playback: Playback, title: str, character=None):
        """`character`: (rig, retargeter, name) to draw instead of the mannequin."""
        self.ctx = ctx
        self.playback = playback
        self.title = title
        self.renderer = Renderer(ctx)
        if character is not None:
            from .render.body import RigBody
            self.renderer.set_body(RigBody(ctx, self.renderer.programs, *character))
        self.keyboard = Keyboard()
        self.gamepad = Gamepad()
        self.hud = ReplayHud()
        self.options = ViewOptions()
        self.quit_requested = False

    # -- events ------------------------------------------------------------------------------------

    def on_key(self, key: int, pressed: bool) -> None:
        keyboard, playback = self.keyboard, self.playback
        if not pressed:
            keyboard.down.discard(key)
            return
        keyboard.down.add(key)
        if key == pygame.K_SPACE:
            playback.paused = not playback.paused
        elif key in (pygame.K_RIGHT, pygame.K_PERIOD):
            playback.step(1)
        elif key in (pygame.K_LEFT, pygame.K_COMMA):
            playback.step(-1)
        elif key == pygame.K_PAGEDOWN:
            playback.step(60)
        elif key == pygame.K_PAGEUP:
            playback.step(-60)
        elif key == pygame.K_RIGHTBRACKET:
            playback.change_speed(1)
        elif key == pygame.K_LEFTBRACKET:
            playback.change_speed(-1)
        elif key == pygame.K_HOME:
            playback.seek(0)
        elif key == pygame.K_F1:
            self.options.debug = not self.options.debug
        elif key == pygame.K_F3:
            self.options.show_contacts = not self.options.show_contacts
        elif key in (pygame.K_ESCAPE, pygame.K_q):
            self.quit_requested = True

    def on_mouse_drag(self, dx: float, dy: float) -> None:
        camera = self.playback.camera
        camera.yaw += dx * MOUSE_TURN
        tilt = -dy if camera.invert_y else dy
        camera.pitch = min(max(camera.pitch + tilt * MOUSE_TURN, PITCH_MIN), PITCH_MAX)

    def on_scroll(self, dy: float) -> None:
        self.playback.camera.update(0.0, 0.0, -2.0 * dy)

    def on_click(self, x: int, y: int, size) -> None:
        pass

    def on_mouse_move(self, x: int, y: int, size) -> None:
        pass

    # -- frame ---------------------------------------------------------------------------------------

    def update(self, seconds: float) -> None:
        """Pad and held keys move the camera; A pauses, the d-pad steps, the shoulders change speed."""
        playback = self.playback
        self.gamepad.poll()
        reading = self.gamepad.read()
        look_x, look_y = self.keyboard.orbit()
        zoom = self.keyboard.zoom
        if reading is not None:
            axes, pressed = reading
            if abs(axes["look_x"]) + abs(axes["look_y"]) > 0.3:
                look_x, look_y = axes["look_x"], axes["look_y"]
            if "a" in pressed:
                playback.paused = not playback.paused
            if "dpright" in pressed:
                playback.step(1)
            if "dpleft" in pressed:
                playback.step(-1)
            if "rightshoulder" in pressed:
                playback.change_speed(1)
            if "leftshoulder" in pressed:
                playback.change_speed(-1)
            if "x" in pressed:
                self.options.debug = not self.options.debug
            if "back" in pressed or "b" in pressed:
                self.quit_requested = True
        ticks = seconds * 60.0          # the camera turns at its per-tick rate, whatever the frame rate
        playback.camera.update(look_x * ticks, look_y * ticks, zoom * ticks)
        playback.advance(seconds)

    def render(self, framebuffer, size: tuple[int, int] | None = None) -> None:
        size = tuple(size or framebuffer.size)
        overlays = [("replay", self.hud.draw(self.playback, self.title, HELP), (12, 12))]
        self.renderer.render(framebuffer, self.playback, self.options, overlays, size)
