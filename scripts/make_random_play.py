"""Writes scripts/random_play.json: five minutes of seeded random play (stick directions and
strengths, releases, jogging, strafing, crouching, curving), the kind of input a player gives.

    python scripts/make_random_play.py [--seed 11] [--minutes 5]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np


def random_play(seed: int, minutes: float) -> dict:
    rng = np.random.default_rng(seed)
    segments, total = [], 0.0
    while total < minutes * 60:
        duration = float(np.round(rng.uniform(0.5, 4.0), 1))
        segment: dict = {"duration": duration}
        if rng.random() < 0.2:
            segment["label"] = "release"
        else:
            angle = rng.uniform(-math.pi, math.pi)
            strength = rng.choice([0.5, 1.0, 1.0])
            segment["move"] = [round(strength * math.sin(angle), 2), round(strength * math.cos(angle), 2)]
            kind = rng.random()
            if kind < 0.3:
                segment["jog"] = 1.0
            elif kind < 0.45:
                segment["strafe"] = 1.0
            elif kind < 0.55:
                segment["crouch"] = True
            if rng.random() < 0.25:
                segment["move_turn"] = int(rng.choice([-180, -90, 90, 180]))
        segments.append(segment)
        total += duration
    return {"description": f"{minutes:g} minutes of seeded random play (scripts/make_random_play.py --seed {seed}): "
                           "stick directions and strengths, releases, jogging, strafing, crouching, curving.",
            "segments": segments}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--out", default=str(Path(__file__).with_name("random_play.json")))
    args = parser.parse_args()
    script = random_play(args.seed, args.minutes)
    Path(args.out).write_text(json.dumps(script, indent=1) + "\n")
    print(f"wrote {args.out}: {len(script['segments'])} segments")


if __name__ == "__main__":
    main()
