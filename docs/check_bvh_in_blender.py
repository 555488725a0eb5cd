"""Open a BVH written by `pfnn-demo retarget` or `pfnn-demo run --record OUT.bvh` in Blender and
check that every bone lands where the project's own reader puts its joint, on every frame; with
`--recording REC.npz` (the same run also recorded as .npz), also where the recording drew it.

Needs Blender's Python module next to the package (it is not a dependency of the project):

    python -m venv blender-env && blender-env/bin/pip install bpy==4.2.0 -e .
    blender-env/bin/pfnn-demo retarget data/motions/humanoid3d_walk.txt walk.bvh --seconds 2
    blender-env/bin/python docs/check_bvh_in_blender.py walk.bvh
    blender-env/bin/pfnn-demo run --headless --script walk_circle --record play.bvh
    blender-env/bin/pfnn-demo run --headless --script walk_circle --record play.npz
    blender-env/bin/python docs/check_bvh_in_blender.py play.bvh --recording play.npz --tolerance 0.01

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
    parser.add_argument("--recording", metavar="REC.npz",
                        help="a recording of the same play: compare with its drawn joint positions too")
    parser.add_argument("--tolerance", type=float, default=1e-3, help="largest allowed distance, in file units")
    args = parser.parse_args(argv)
    try:
        import bpy
    except ImportError:
        print("Blender's Python module is missing: pip install bpy==4.2.0 (Python 3.11)", file=sys.stderr)
        return 2

    motion = read_bvh(args.bvh)
    expected = motion.global_transforms()[..., :3, 3]
    targets = {"the reader's joints": expected}
    if args.recording:
        with np.load(args.recording) as recording:
            recorded = recording["joint_positions"].astype(np.float64)
        if recorded.shape != expected.shape:
            print(f"the recording holds {recorded.shape[0]} frames, the BVH {motion.frames}")
            return 1
        targets["the recording's joints"] = recorded
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.bvh(filepath=args.bvh, global_scale=1.0, rotate_mode="NATIVE", axis_forward="-Z",
                            axis_up="Y", update_scene_fps=True, update_scene_duration=True)
    armature = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    scene = bpy.context.scene
    missing = [name for name in motion.names if name not in armature.pose.bones]
    heads = np.zeros_like(expected)
    for frame in range(motion.frames):
        scene.frame_set(scene.frame_start + frame)
        for index, name in enumerate(motion.names):
            if name in missing:
                continue
            x, y, z = armature.matrix_world @ armature.pose.bones[name].head
            heads[frame, index] = (x, z, -y)      # back to the file's y-up axes
    present = [index for index, name in enumerate(motion.names) if name not in missing]
    fps = scene.render.fps / scene.render.fps_base
    print(f"Blender {bpy.app.version_string}: {len(armature.pose.bones)} bones, {motion.frames} frames at "
          f"{fps:g} fps (tolerance {args.tolerance:g})")
    worst = 0.0
    for label, target in targets.items():
        distance = float(np.linalg.norm(heads[:, present] - target[:, present], axis=-1).max())
        worst = max(worst, distance)
        print(f"  largest distance of a bone head from {label}: {distance:.2e}")
    if missing:
        print("joints without a bone: " + ", ".join(missing))
    return 0 if worst <= args.tolerance and not missing and abs(fps - 1 / motion.frame_time) < 0.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
