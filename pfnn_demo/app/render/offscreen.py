"""Offscreen rendering through EGL (no window, no display): pictures for documentation and tests."""

from __future__ import annotations

import os
from pathlib import Path

import moderngl
import numpy as np

from ...errors import PfnnError


def create_offscreen_context() -> moderngl.Context:
    """A standalone OpenGL 3.3+ context: EGL first (headless Mesa or a GPU), then the platform default."""
    errors = []
    for backend in ("egl", None):
        try:
            kwargs = {"standalone": True, "require": 330}
            if backend:
                kwargs["backend"] = backend
            return moderngl.create_context(**kwargs)
        except Exception as error:   # each backend fails in its own way when unavailable
            errors.append(f"{backend or 'default'}: {error}")
    raise PfnnError("no OpenGL 3.3 context could be created for offscreen rendering ("
                    + "; ".join(errors) + "). On Debian/Ubuntu install Mesa's EGL: "
                    "apt install libegl1 libegl-mesa0 libgl1-mesa-dri")


class OffscreenTarget:
    """A colour + depth framebuffer of a given size, read back as an (H, W, 3) uint8 image."""

    def __init__(self, ctx: moderngl.Context, size: tuple[int, int], samples: int = 0):
        self.ctx = ctx
        self.size = size
        self.framebuffer = ctx.simple_framebuffer(size, components=4)

    def read(self) -> np.ndarray:
        raw = self.framebuffer.read(components=3, alignment=1)
        image = np.frombuffer(raw, np.uint8).reshape(self.size[1], self.size[0], 3)
        return image[::-1].copy()   # OpenGL rows start at the bottom


def save_png(image: np.ndarray, path: str | Path) -> Path:
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    surface = pygame.image.frombuffer(np.ascontiguousarray(image).tobytes(), (image.shape[1], image.shape[0]), "RGB")
    pygame.image.save(surface, str(path))
    return path
