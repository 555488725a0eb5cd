"""The replay HUD: which file, which frame, the time, the speed, paused or playing, the phase and
the contacts where the recording has them, and the keys."""

from __future__ import annotations

import math
import os

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import pygame  # noqa: E402

from .hud import INK, PANEL, RED, _font  # noqa: E402

ORANGE, GREY = (255, 140, 0, 255), (150, 150, 150, 255)


class ReplayHud:
    SIZE = (560, 112)

    def __init__(self):
        self.surface = pygame.Surface(self.SIZE, pygame.SRCALPHA)
        self.font = _font(24)
        self.small = _font(18)

    def draw(self, playback, title: str, help_line: str) -> pygame.Surface:
        s = self.surface
        s.fill((0, 0, 0, 0))
        pygame.draw.rect(s, PANEL, s.get_rect(), border_radius=8)
        state = "paused" if playback.paused else f"playing {playback.speed:g}x"
        s.blit(self.font.render(f"Replay: {title}", True, INK), (12, 10))
        s.blit(self.font.render(f"frame {playback.frame + 1} / {playback.frames}    "
                                f"{playback.frame * playback.frame_time:6.2f} s / {playback.duration:.2f} s    {state}",
                                True, RED if playback.paused else INK), (12, 38))
        contacts = playback.contacts
        if contacts is not None:
            s.blit(self.small.render("contacts  L heel  L toe  R heel  R toe", True, INK), (12, 68))
            for i, value in enumerate(contacts):
                pygame.draw.circle(s, ORANGE if value > 0.5 else GREY, (295 + 22 * i, 74), 7)
        phase = playback.phase
        if phase is not None:
            width = self.SIZE[0]
            centre = (width - 40, 50)
            pygame.draw.circle(s, INK, centre, 26, 2)
            angle = phase - math.pi / 2
            pygame.draw.circle(s, RED, (int(centre[0] + 26 * math.cos(angle)), int(centre[1] + 26 * math.sin(angle))), 5)
            s.blit(self.small.render("phase", True, INK), (width - 57, 44))
        s.blit(self.small.render(help_line, True, INK), (12, 90))
        return s
