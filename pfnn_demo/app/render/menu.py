"""The in-app menu: a list of entries driven by pad (d-pad, A, B), keyboard and mouse.

The model (entries, selection, actions) is plain Python; `draw` renders it with pygame.font.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import pygame  # noqa: E402

ROW_HEIGHT = 34
WIDTH = 560     # at most; narrower windows get a narrower box


def _width(size) -> int:
    return max(min(WIDTH, size[0] - 20), 100)


@dataclasses.dataclass
class Entry:
    label: Callable[[], str]          # text, recomputed each draw (toggles show their state)
    activate: Callable[[], None] | None = None
    left: Callable[[], None] | None = None
    right: Callable[[], None] | None = None


@dataclasses.dataclass
class Page:
    title: str
    entries: list[Entry]
    text: list[str] = dataclasses.field(default_factory=list)   # for the about page


class Menu:
    def __init__(self):
        self.open = False
        self.stack: list[Page] = []
        self.selected = 0
        self._fonts = None

    def show(self, page: Page) -> None:
        self.open = True
        self.stack = [page]
        self.selected = 0

    def push(self, page: Page) -> None:
        self.stack.append(page)
        self.selected = 0

    def back(self) -> None:
        self.stack.pop()
        self.selected = 0
        if not self.stack:
            self.open = False

    def close(self) -> None:
        self.open = False
        self.stack = []

    @property
    def page(self) -> Page:
        return self.stack[-1]

    def navigate(self, action: str) -> None:
        if not self.open:
            return
        entries = self.page.entries
        if action == "up" and entries:
            self.selected = (self.selected - 1) % len(entries)
        elif action == "down" and entries:
            self.selected = (self.selected + 1) % len(entries)
        elif action == "back":
            self.back()
        elif entries and action in ("select", "left", "right"):
            entry = entries[self.selected]
            handler = {"select": entry.activate or entry.right, "left": entry.left, "right": entry.right}[action]
            if handler is not None:
                handler()

    def rows(self, size: tuple[int, int]) -> list[pygame.Rect]:
        """Screen rectangles of the entries, for mouse hits."""
        top = self._top(size)
        width = _width(size)
        x = (size[0] - width) // 2
        first = top + 70 + ROW_HEIGHT * len(self.page.text)
        return [pygame.Rect(x + 20, first + ROW_HEIGHT * i, width - 40, ROW_HEIGHT) for i in range(len(self.page.entries))]

    def _top(self, size) -> int:
        height = 90 + ROW_HEIGHT * (len(self.page.entries) + len(self.page.text))
        return max((size[1] - height) // 2, 10)

    def click(self, x: int, y: int, size: tuple[int, int]) -> None:
        for index, rect in enumerate(self.rows(size)):
            if rect.collidepoint(x, y):
                self.selected = index
                self.navigate("select")
                return

    def hover(self, x: int, y: int, size: tuple[int, int]) -> None:
        for index, rect in enumerate(self.rows(size)):
            if rect.collidepoint(x, y):
                self.selected = index

    def draw(self, size: tuple[int, int]) -> pygame.Surface:
        """The menu over a dimmed full-screen surface."""
        if self._fonts is None:
            if not pygame.font.get_init():
                pygame.font.init()
            self._fonts = (pygame.font.Font(None, 44), pygame.font.Font(None, 30), pygame.font.Font(None, 24))
        title_font, font, small = self._fonts
        surface = pygame.Surface(size, pygame.SRCALPHA)
        surface.fill((10, 12, 18, 150))
        page = self.page
        top = self._top(size)
        box = pygame.Rect((size[0] - _width(size)) // 2, top, _width(size), 90 + ROW_HEIGHT * (len(page.entries) + len(page.text)))
        pygame.draw.rect(surface, (245, 243, 236, 240), box, border_radius=12)
        surface.blit(title_font.render(page.title, True, (30, 30, 30)), (box.x + 20, box.y + 18))
        for i, line in enumerate(page.text):
            surface.blit(small.render(line, True, (50, 50, 50)), (box.x + 20, box.y + 70 + ROW_HEIGHT * i))
        for index, (entry, rect) in enumerate(zip(page.entries, self.rows(size))):
            if index == self.selected:
                pygame.draw.rect(surface, (255, 205, 90, 255), rect, border_radius=6)
            surface.blit(font.render(entry.label(), True, (20, 20, 20)), (rect.x + 12, rect.y + 7))
        hint = "d-pad / arrows: choose    A / Enter: select    B / Esc: back"
        surface.blit(small.render(hint, True, (230, 230, 230)), (box.x, box.bottom + 10))
        return surface
