"""The interactive demo without a window: keyboard, a virtual SDL gamepad (plugged and unplugged),
the menu, and the fixed 60 Hz tick. Rendering goes to an offscreen EGL framebuffer."""

from __future__ import annotations

import pygame
import pytest

from pfnn_demo.app.demo import Demo
from pfnn_demo.sim.phase_network import PhaseFunctionedNetwork
from pfnn_demo.app.render.offscreen import OffscreenTarget

from virtual_gamepad import VirtualGamepad

TICK = 1 / 60


@pytest.fixture
def demo(gl, original_weights):
    return Demo(gl, PhaseFunctionedNetwork(original_weights, "cubic"), "plaza")


def go_to_entry(demo, label: str) -> None:
    """Move the menu's selection down to the entry whose text starts with `label`, by key presses."""
    labels = [entry.label() for entry in demo.menu.page.entries]
    index = next(i for i, text in enumerate(labels) if text.startswith(label))
    while demo.menu.selected != index:
        demo.on_key(pygame.K_DOWN, True)


def run_frames(demo, frames, target=None):
    for _ in range(frames):
        demo.update(TICK)
        if target is not None:
            demo.render(target.framebuffer)


def test_fixed_tick_is_independent_of_the_frame_rate(demo):
    assert demo.update(0.1) == 6                      # a slow frame catches up
    assert demo.update(TICK / 2) == 0 and demo.update(TICK / 2) == 1
    assert demo.update(5.0) == 8                      # a stall does not spiral


def test_keyboard_moves_the_character(demo, gl):
    start = demo.controller.root_position
    demo.on_key(pygame.K_w, True)
    run_frames(demo, 150, OffscreenTarget(gl, (320, 240)))
    demo.on_key(pygame.K_w, False)
    moved = demo.controller.root_position - start
    # Camera at yaw 0 looks along -X: W walks that way.
    assert moved[0] < -120 and abs(moved[2]) < 0.3 * abs(moved[0])
    demo.on_key(pygame.K_LSHIFT, True)
    demo.on_key(pygame.K_d, True)
    run_frames(demo, 60)
    assert demo.last_input.jog == 1.0 and demo.last_input.move_x == 1.0


def test_virtual_gamepad_moves_the_character_and_unplugging_it_is_harmless(demo):
    pad = VirtualGamepad()
    try:
        demo.update(TICK)
        assert "Gamepad connected" in demo.note
        pad.axis("lefty", -32767)                     # stick up
        start = demo.controller.root_position
        run_frames(demo, 150)
        assert demo.last_input.move_y > 0.99 and demo.last_input.jog == 0.0
        moved = demo.controller.root_position - start
        assert moved[0] < -120
        pad.button("x", True)                         # X toggles debug drawing
        run_frames(demo, 2)
        pad.button("x", False)
        assert demo.input.toggles.debug is False
    finally:
        pad.detach()
    run_frames(demo, 30)                              # unplugged mid-run: no crash
    assert "Gamepad lost" in demo.note
    assert demo.last_input.move_y == 0.0
    demo.on_key(pygame.K_s, True)                     # the keyboard still drives
    run_frames(demo, 5)
    assert demo.last_input.move_y == -1.0


def test_menu_switches_scene_and_mode(demo, gl):
    target = OffscreenTarget(gl, (640, 480))
    demo.on_key(pygame.K_ESCAPE, True)
    assert demo.menu.open
    demo.render(target.framebuffer)
    demo.on_key(pygame.K_DOWN, True)                  # "Scene"
    demo.on_key(pygame.K_RETURN, True)
    assert demo.menu.page.title == "Scene"
    demo.on_key(pygame.K_DOWN, True)                  # the second scene: tunnel
    demo.on_key(pygame.K_RETURN, True)
    assert demo.controller.scene.name == "tunnel" and not demo.menu.open
    demo.on_key(pygame.K_ESCAPE, True)
    go_to_entry(demo, "Debug joints and velocities")
    demo.on_key(pygame.K_RETURN, True)
    assert demo.options.debug_joints
    demo.on_key(pygame.K_ESCAPE, True)
    demo.on_key(pygame.K_ESCAPE, True)
    go_to_entry(demo, "Network mode")
    demo.on_key(pygame.K_RIGHT, True)
    assert demo.controller.network.mode == "constant"
    demo.on_key(pygame.K_ESCAPE, True)                # back out of the menu
    assert not demo.menu.open
    demo.on_key(pygame.K_2, True)                     # number keys pick scenes too
    demo.on_key(pygame.K_1, True)
    assert demo.controller.scene.name == "plaza"
    run_frames(demo, 3, target)
    image = target.read()
    assert image.std() > 10
