"""The real window, on a virtual X display (Xvfb, where installed): it opens, and the console
shows nothing but the project's own messages unless --verbose asks for the libraries' too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed (apt install xvfb)")


@pytest.fixture(scope="module")
def display():
    for number in range(87, 120):
        if not os.path.exists(f"/tmp/.X11-unix/X{number}") and not os.path.exists(f"/tmp/.X{number}-lock"):
            break
    server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(50):
        if os.path.exists(f"/tmp/.X11-unix/X{number}"):
            break
        time.sleep(0.1)
    yield f":{number}"
    server.terminate()
    server.wait(timeout=10)


def play_for_a_while(display: str, arguments: list[str], seconds: float = 8.0) -> str:
    """Run the window for `seconds` (it must still be running then), stop it, return its console output."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SDL_") and key != "PYGAME_HIDE_SUPPORT_PROMPT"}
    env["DISPLAY"] = display
    process = subprocess.Popen([sys.executable, "-m", "pfnn_demo", *arguments], cwd=REPO, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        process.wait(timeout=seconds)
        output = process.stdout.read()
        pytest.fail(f"the window closed by itself (status {process.returncode}): {output}")
    except subprocess.TimeoutExpired:
        process.terminate()
        output, _ = process.communicate(timeout=20)
    return output


def test_the_window_console_is_quiet_unless_verbose(display):
    assert play_for_a_while(display, ["run", "--size", "640x360"]) == ""
    verbose = play_for_a_while(display, ["run", "--size", "640x360", "--verbose"])
    assert "moderngl_window" in verbose and "Context Version" in verbose


def test_the_replay_window_opens_quietly(display, tmp_path):
    from pfnn_demo.tools.cli import main

    recording = tmp_path / "walk.npz"
    assert main(["run", "--headless", "--script", "walk_circle", "--frames", "120", "--record", str(recording)]) == 0
    assert play_for_a_while(display, ["replay", str(recording), "--size", "640x360"]) == ""
