"""The HUD (original-demo.md: Debug drawing and HUD, plus text): stick and trigger, IK/DIR/RES, phase
circle (or a MANN's expert weights, or a DeepPhase controller's phase channels), FPS, scene and
network.

Drawn with pygame into a small transparent surface; the renderer composites it.
"""

from __future__ import annotations

import math
import os

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import pygame  # noqa: E402

from ...sim.networks import describe_network  # noqa: E402

INK = (20, 20, 20, 255)
PANEL = (255, 255, 255, 150)
GREEN, RED = (40, 170, 60, 255), (200, 50, 40, 255)


def _font(size: int) -> pygame.font.Font:
    if not pygame.font.get_init():
        pygame.font.init()
    return pygame.font.Font(None, size)


class Hud:
    SIZE = (300, 150)

    def __init__(self):
        self.surface = pygame.Surface(self.SIZE, pygame.SRCALPHA)
        self.font = _font(22)
        self.small = _font(18)

    def draw(self, controls, controller, fps: float, scene_name: str,
             recording_seconds: float | None = None) -> pygame.Surface:
        s = self.surface
        s.fill((0, 0, 0, 0))
        pygame.draw.rect(s, PANEL, s.get_rect(), border_radius=8)
        # Left stick in a circle, right trigger as a bar.
        centre = (55, 60)
        pygame.draw.circle(s, INK, centre, 40, 1)
        tip = (centre[0] + 40 * controls.move_x, centre[1] - 40 * controls.move_y)
        pygame.draw.line(s, INK, centre, tip, 2)
        pygame.draw.circle(s, INK, (int(tip[0]), int(tip[1])), 4)
        pygame.draw.rect(s, INK, (108, 20, 10, 80), 1)
        filled = int(78 * controls.jog)
        pygame.draw.rect(s, INK, (109, 99 - filled, 8, filled))
        # IK / DIR / RES with status dots (DIR shows how much the character strafes).
        strafe = controller.strafe_amount
        for row, (label, colour) in enumerate((
                ("IK", GREEN if controls.ik else RED),
                ("DIR", (int(255 * (1 - strafe)), int(200 * strafe), 0, 255)),
                ("RES", GREEN if controls.responsive else RED))):
            y = 22 + 28 * row
            s.blit(self.font.render(label, True, INK), (135, y - 8))
            pygame.draw.circle(s, colour, (185, y), 7)
        experts, manifold = controller.expert_weights, controller.phase_manifold
        if manifold is not None:
            self._manifold_circles(s, manifold, controller.network.typical_amplitudes())
        elif experts is not None:
            self._expert_bars(s, experts)
        else:
            self._phase_circle(s, controller.phase)
        count = controller.characters
        crowd = f"   {count} characters" if count > 1 else ""
        s.blit(self.small.render(f"{fps:5.1f} fps   {scene_name}   {describe_network(controller.network)}{crowd}",
                                 True, INK), (12, 112))
        if recording_seconds is not None:
            pygame.draw.circle(s, RED, (142, 98), 6)
            s.blit(self.small.render(f"REC {recording_seconds:.1f} s", True, RED), (152, 92))
        return s

    def _phase_circle(self, s: pygame.Surface, phase: float) -> None:
        pcentre = (250, 50)
        pygame.draw.circle(s, INK, pcentre, 30, 2)
        angle = phase - math.pi / 2
        pygame.draw.circle(s, RED, (int(pcentre[0] + 30 * math.cos(angle)), int(pcentre[1] + 30 * math.sin(angle))), 6)
        s.blit(self.small.render("phase", True, INK), (pcentre[0] - 17, pcentre[1] - 6))

    def _expert_bars(self, s: pygame.Surface, weights) -> None:
        """The gate's weight of each expert as a bar (where a PFNN shows its phase)."""
        left, bottom, height, width = 212, 82, 60, 76
        bar = max(2, width // len(weights) - 2)
        for k, weight in enumerate(weights):
            filled = int(round(height * float(weight)))
            x = left + k * (bar + 2)
            pygame.draw.rect(s, INK, (x, bottom - height, bar, height), 1)
            pygame.draw.rect(s, RED, (x, bottom - filled, bar, filled))
        s.blit(self.small.render("experts", True, INK), (left + 8, bottom + 2))

    def _manifold_circles(self, s: pygame.Surface, manifold, typical) -> None:
        """Each phase channel (manifold (M, 3): phase in cycles, amplitude, frequency) as a circle
        whose radius is its amplitude and whose hand is its phase, inside a ring that a channel
        at twice its typical amplitude fills."""
        ring, columns = 13, 3 if len(manifold) > 4 else max(1, len(manifold))
        for k, (phase, amplitude, _) in enumerate(manifold):
            centre = (222 + 30 * (k % columns), 24 + 34 * (k // columns))
            pygame.draw.circle(s, (120, 120, 120, 255), centre, ring, 1)
            radius = max(2.0, ring * min(1.0, float(amplitude) / (2.0 * float(typical[k]))))
            angle = 2 * math.pi * float(phase) - math.pi / 2
            tip = (centre[0] + radius * math.cos(angle), centre[1] + radius * math.sin(angle))
            pygame.draw.circle(s, RED, centre, int(round(radius)), 2)
            pygame.draw.line(s, INK, centre, (int(round(tip[0])), int(round(tip[1]))), 2)
        s.blit(self.small.render("phases", True, INK), (230, 88))

    def note(self, text: str) -> pygame.Surface:
        """A one-line message (a pad plugged in, a file written) on a panel as wide as it needs."""
        rendered = self.font.render(text, True, RED)
        surface = pygame.Surface((rendered.get_width() + 20, rendered.get_height() + 12), pygame.SRCALPHA)
        pygame.draw.rect(surface, PANEL, surface.get_rect(), border_radius=8)
        surface.blit(rendered, (10, 6))
        return surface
