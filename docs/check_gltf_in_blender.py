"""Open a .glb written by `pfnn-demo run --headless ... --record OUT.glb` in Blender and check that
every bone of every skeleton lands where the recording drew its joint, on every frame.

With the mannequin (no --character) the joints are the 31 canonical ones, compared with the
.npz recording of the same run; with --character RIG.glb, the rig's joints, compared with the
retargeted pose the demo drew (scaled back to the rig's size, as the export is).

Needs Blender's Python module next to the package (it is not a dependency of the project):

    python -m venv blender-env && blender-env/bin/pip install bpy==5.0.1 -e .
    blender-env/bin/pfnn-demo run --headless --script walk_circle --record walk.glb
    blender-env/bin/pfnn-demo run --headless --script walk_circle --record walk.npz
    blender-env/bin/python docs/check_gltf_in_blender.py walk.glb --recording walk.npz
    blender-env/bin/pfnn-demo run --headless --script walk_circle --record robot.glb --character RIG.glb
    blender-env/bin/python docs/check_gltf_in_blender.py robot.glb --recording walk.npz --character RIG.glb

Blender's glTF importer turns glTF's y-up axes into its z-up ones: a joint at (x, y, z) in the
file is a bone head at (x, -z, y) in Blender.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def blender_heads(path: str, frames: list[int]) -> dict[str, np.ndarray]:
    """Bone name -> (F, 3) world head positions in glTF's axes, at the given animation frames."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.render.fps = 60
    bpy.ops.import_scene.gltf(filepath=path)
    armatures = [o for o in bpy.context.scene.objects if o.type == "ARMATURE"]
    heads = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        for armature in armatures:
            for bone in armature.pose.bones:
                x, y, z = armature.matrix_world @ bone.head
                heads.setdefault(bone.name, []).append((x, z, -y))
    return {name: np.array(values) for name, values in heads.items()}


def expected_joints(recording: str, character: str | None, frames: list[int]) -> dict[str, np.ndarray]:
    """Joint name -> (F, 3) positions in metres the export should hold."""
    from pfnn_demo.sim.scene import load_scene
    from pfnn_demo.sim.skeleton import JOINT_NAMES

    with np.load(recording) as data:
        rotations, positions = data["joint_rotations"][frames], data["joint_positions"][frames]
        scene = str(data["scene"])
    if character is None:
        return {name: positions[:, j] / 100.0 for j, name in enumerate(JOINT_NAMES)}
    from pfnn_demo.character import load_character

    rig, _, retargeter = load_character(character)
    drawn = np.zeros(rotations.shape[:-2] + (4, 4), np.float32)
    drawn[..., :3, :3], drawn[..., :3, 3], drawn[..., 3, 3] = rotations, positions, 1.0
    world = retargeter(drawn, load_scene(scene).heightmap.sample)
    return {name: world[:, j, :3, 3] / (100.0 * retargeter.scale) for j, name in enumerate(rig.names)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("glb", help="the .glb to open in Blender")
    parser.add_argument("--recording", required=True, help="the .npz of the same run")
    parser.add_argument("--character", help="the rig the .glb was written on (--character of the run)")
    parser.add_argument("--tolerance", type=float, default=0.002, help="metres (default 0.002)")
    args = parser.parse_args(argv)
    with np.load(args.recording) as data:
        count = len(data["joint_positions"])
    frames = list(range(0, count, max(1, count // 40)))
    heads = blender_heads(args.glb, frames)
    expected = expected_joints(args.recording, args.character, frames)
    worst, checked = 0.0, 0
    for name, positions in expected.items():
        if name not in heads:
            print(f"missing bone {name}")
            return 1
        worst = max(worst, float(np.abs(heads[name] - positions).max()))
        checked += 1
    print(f"{checked} bones x {len(frames)} frames: largest difference {worst * 1000:.3f} mm")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
