"""Render docs/characters.png: the bundled robot and the mannequin side by side, walking,
crouching through the tunnel, jumping a bar and in a crowd, under the same inputs.

    python docs/make_character_strip.py [--character characters/RobotExpressive.glb] [--out docs/characters.png]

Every picture is simulated headless and rendered offscreen (EGL); the canonical skeleton the
rig is driven by is drawn over it in cyan.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from make_frame_strip import tile_screenshots

REPO = Path(__file__).resolve().parents[1]
SHOTS = [  # (arguments of `pfnn-demo screenshot`, label)
    (["--script", "walk_circle", "--scene", "plaza", "--frames", "200", "--camera-yaw", "90"], "walk"),
    (["--script", "walk_circle", "--scene", "plaza", "--frames", "215", "--camera-yaw", "180"], "walk, from the front"),
    (["--script", "crouch_through", "--scene", "tunnel", "--frames", "420"], "crouching in the tunnel"),
    (["--script", "jump_bars", "--scene", "jumps", "--frames", "158", "--camera-yaw", "90"], "jumping a bar"),
    (["--script", "walk_circle", "--scene", "plaza", "--frames", "240", "--characters", "16",
      "--camera-distance", "700"], "16 in a crowd"),
]


def render(out: Path, character: str) -> None:
    rows = [[(arguments + ["--character", character, "--skeleton", "--no-debug"], f"robot: {label}")
             for arguments, label in SHOTS],
            [(arguments + ["--no-debug"], f"mannequin: {label}") for arguments, label in SHOTS]]
    tile_screenshots(out, rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--character", default=str(REPO / "characters" / "RobotExpressive.glb"))
    parser.add_argument("--out", default=str(Path(__file__).with_name("characters.png")), help="picture to write")
    options = parser.parse_args()
    render(Path(options.out), options.character)
