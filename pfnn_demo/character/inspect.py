"""`pfnn-demo character inspect`: a rig's joints, the joint map found, and whether it can be driven."""

from __future__ import annotations

from ..sim.skeleton import JOINT_NAMES
from .joint_map import REQUIRED, JointMap
from .rig import Rig


def describe(rig: Rig, joint_map: JointMap, scale: float | None) -> list[str]:
    """Lines for the console: the hierarchy with each joint's canonical role, then a summary."""
    role = {joint: name for name, joint in joint_map.joints.items()}
    vertices = sum(len(p.positions) for p in rig.primitives)
    triangles = sum(len(p.indices) // 3 for p in rig.primitives)
    textured = sum(p.image is not None for p in rig.primitives)
    lines = [f"{rig.path}: {rig.count} joints, {len(rig.primitives)} mesh parts ({vertices} vertices, "
             f"{triangles} triangles{f', {textured} textured' if textured else ''})", "", "joints (canonical role):"]
    depth = [0] * rig.count
    for joint in range(rig.count):
        parent = rig.parents[joint]
        depth[joint] = 0 if parent < 0 else depth[parent] + 1
    for joint in _tree_order(rig):
        tag = f"  <- {role[joint]}" if joint in role else ""
        lines.append(f"  {'  ' * depth[joint]}{rig.names[joint]}{tag}")
    mapped = [name for name in JOINT_NAMES if name in joint_map]
    lines += ["", f"mapped: {len(mapped)} canonical joints ({', '.join(mapped)})"]
    unused = joint_map.unmapped()
    lines.append(f"unmapped rig joints (keep their bind pose under their parents): {len(unused)}"
                 + (f" ({', '.join(unused[:12])}{', ...' if len(unused) > 12 else ''})" if unused else ""))
    missing = joint_map.missing()
    if missing:
        lines.append(f"cannot be driven: no joint for {', '.join(missing)} (of the required "
                     f"{', '.join(REQUIRED)}); name them in a --character-map")
    else:
        lines.append(f"can be driven: drawn at {scale:.3g} times its size (the canonical skeleton's leg length)")
    return lines


def _tree_order(rig: Rig) -> list[int]:
    order, stack = [], [j for j in range(rig.count) if rig.parents[j] < 0][::-1]
    while stack:
        joint = stack.pop()
        order.append(joint)
        stack.extend(rig.children(joint)[::-1].tolist())
    return order
