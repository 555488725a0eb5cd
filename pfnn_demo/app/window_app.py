"""The window: a moderngl-window app on its pygame2 backend that forwards everything to the
app's logic (`Demo` for play, `ReplayDemo` for replays).

Library start-up chatter (moderngl-window's context report, SDL's audio start) is kept off the
console unless `verbose`: the demo plays no sound, so SDL's audio is not started at all.
"""

from __future__ import annotations

import logging
import os
from typing import Callable

import moderngl_window as mglw
import pygame

from ..errors import PfnnError


class PfnnWindow(mglw.WindowConfig):
    gl_version = (3, 3)
    title = "pfnn-demo"
    window_size = (1280, 720)
    aspect_ratio = None
    resizable = True
    vsync = True
    log_level = None        # moderngl-window's own log lines; INFO with --verbose
    make_app: Callable = None   # set by `run_window`: ctx -> the app's logic
    opened = False          # whether a window (and its OpenGL context) came up

    def __init__(self, **kwargs):
        type(self).opened = True
        super().__init__(**kwargs)
        self.wnd.exit_key = None          # Esc opens the menu; quitting is in the menu
        self.demo = type(self).make_app(self.ctx)

    def on_render(self, time: float, frame_time: float) -> None:
        self.demo.update(frame_time)
        self.demo.render(self.wnd.fbo, self.wnd.buffer_size)   # the size follows window resizes
        if self.demo.quit_requested:
            self.wnd.close()

    def on_key_event(self, key, action, modifiers) -> None:
        keys = self.wnd.keys
        if action == keys.ACTION_PRESS and key == keys.F11:
            return   # moderngl-window toggles fullscreen itself
        self.demo.on_key(key, action == keys.ACTION_PRESS)

    def on_mouse_drag_event(self, x: int, y: int, dx: int, dy: int) -> None:
        self.demo.on_mouse_drag(dx, dy)

    def on_mouse_position_event(self, x: int, y: int, dx: int, dy: int) -> None:
        self.demo.on_mouse_move(x, y, self.wnd.buffer_size)

    def on_mouse_scroll_event(self, x_offset: float, y_offset: float) -> None:
        self.demo.on_scroll(y_offset)

    def on_mouse_press_event(self, x: int, y: int, button: int) -> None:
        self.demo.on_click(x, y, self.wnd.buffer_size)


def run_window(make_app: Callable, size: tuple[int, int], fullscreen: bool, title: str = "pfnn-demo",
               verbose: bool = False) -> None:
    """Open the window and run `make_app(ctx)`'s logic in it until it asks to quit."""
    PfnnWindow.make_app = staticmethod(make_app)
    PfnnWindow.title = title
    PfnnWindow.log_level = logging.INFO if verbose else None
    if not verbose:
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    # Explicit arguments: moderngl-window would otherwise parse this program's sys.argv.
    args = ["--window", "pygame2", "--size", f"{size[0]}x{size[1]}"]
    if fullscreen:
        args.append("--fullscreen")
    PfnnWindow.opened = False
    try:
        mglw.run_window_config(PfnnWindow, args=args)
    except pygame.error as error:
        if PfnnWindow.opened:
            raise
        raise PfnnError(f"cannot open an OpenGL window ({error}); without a display, play scripts with "
                        "`pfnn-demo run --headless` or render pictures with `pfnn-demo screenshot`") from None
