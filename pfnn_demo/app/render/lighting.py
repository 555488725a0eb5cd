"""The light: one fixed directional sun plus sky light, shared by the shaders and the terrain bake."""

from __future__ import annotations

import numpy as np

LIGHT_OFFSET = (3000.0, 3700.0, 1500.0)     # towards the sun from the scene (original-demo.md: Lighting)
SUN_COLOUR = (0.85, 0.816, 0.748)
SKY_COLOUR = (0.30, 0.33, 0.38)
SHADOW_FLOOR = 0.35     # share of direct light left in shadow
AMBIENT_FLOOR = 0.35    # share of sky light left where fully occluded
GAMMA = 2.2


def uniforms() -> dict[str, object]:
    return {"sun_colour": SUN_COLOUR, "sky_colour": SKY_COLOUR, "shadow_floor": SHADOW_FLOOR,
            "ambient_floor": AMBIENT_FLOOR}


def to_srgb(linear: np.ndarray) -> np.ndarray:
    return np.clip(linear, 0, 1) ** (1 / GAMMA)


def terrain_light_srgb(sun: np.ndarray, ao: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-vertex sRGB light of static terrain, in the open and in the character's shadow.

    `sun` is the sun's cosine times the baked visibility, `ao` the ambient occlusion.
    """
    sky = np.asarray(SKY_COLOUR) * (AMBIENT_FLOOR + (1 - AMBIENT_FLOOR) * ao[..., None])
    direct = np.asarray(SUN_COLOUR) * sun[..., None]
    return to_srgb(direct + sky).astype(np.float32), to_srgb(SHADOW_FLOOR * direct + sky).astype(np.float32)
