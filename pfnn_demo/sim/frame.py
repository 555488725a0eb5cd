"""What a drawn frame offers: the one interface the renderer, the debug view and the character
bodies read, implemented by the live controller, a recording's playback and a still pose.

The canonical skeleton's drawn pose (after foot IK) of every character is the pose; the rest
is debug drawing, None where a source has none (a still pose has no trajectory, a replay only
the network's trajectory samples).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class DrawnFrame(Protocol):
    scene: object                     # a Scene: terrain and areas
    camera: object                    # an OrbitCamera

    def drawn_transforms(self) -> np.ndarray:
        """(K, 31, 4, 4) world transforms as drawn, character 0 the player (float32)."""

    @property
    def trajectory(self):             # the player's 120-frame trajectory (positions, directions, gaits), or None
        ...

    @property
    def crowd_trajectory(self):       # every character's trajectory arrays (K, 120, ...), or None
        ...

    @property
    def trajectory_samples(self):     # (positions, directions, gaits) of the 12 samples, or None
        ...

    @property
    def contacts(self):               # (4,) heel and toe contacts of the player, or None
        ...

    @property
    def joint_velocities(self):       # (31, 3) of the player, or None
        ...
