"""Open a BVH written by `pfnn-demo retarget` in Blender and check that every bone lands where the
project's own reader puts its joint, on every frame.

Needs Blender's Python module next to the package (it is not a dependency of the project):

    python -m venv blender-env && blender-env/bin/pip install bpy==4.2.0 -e .
    blender-env/bin/pfnn-demo retarget data/motions/humanoid3d_walk.txt walk.bvh --seconds 2
    blender-env/bin/python docs/check_bvh_in_blender.py walk.bvh

Blender's BVH importer turns the file's y-up axes into its z-up ones (forward -z), so a joint at
(x, y, z) in the file is a bone head at (x, -z, y) in Blender.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from pfnn_demo.motion.bvh import read_bvh


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bvh", help="BVH file to open in Blender")
    parser.add_argument("--tolerance", type=float, default=1e-3, help="largest allowed distance, in file units")
    args = parser.parse_args(argv)
    try:
        import bpy
    except ImportError:
        print("Blender's Python module is missing: pip install bpy==4.2.0 (Python 3.11)", file=sys.stderr)
        return 2

    motion = read_bvh(args.bvh)
    expected = motion.global_transforms()[..., :3, 3]
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.bvh(filepath=args.bvh, global_scale=1.0, rotate_mode="NATIVE", axis_forward="-Z",
                            axis_up="Y", update_scene_fps=True, update_scene_duration=True)
    armature = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    scene = bpy.context.scene
    missing = [name for name in motion.names if name not in armature.pose.bones]
    worst = 0.0
    for frame in range(motion.frames):
        scene.frame_set(scene.frame_start + frame)
        for index, name in enumerate(motion.names):
            if name in missing:
                continue
            head = np.array(armature.matrix_world @ armature.pose.bones[name].head)
            x, y, z = expected[frame, index]
            worst = max(worst, float(np.linalg.norm(head - (x, -z, y))))
    fps = scene.render.fps / scene.render.fps_base
    print(f"Blender {bpy.app.version_string}: {len(armature.pose.bones)} bones, {motion.frames} frames at "
          f"{fps:g} fps; largest distance from the reader's joints: {worst:.2e} (tolerance {args.tolerance:g})")
    if missing:
        print("joints without a bone: " + ", ".join(missing))
    return 0 if worst <= args.tolerance and not missing and abs(fps - 1 / motion.frame_time) < 0.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
