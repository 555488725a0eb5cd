"""BVH motion capture files: read and write any hierarchy; forward kinematics over all frames.

Rotations follow each joint's channel order (e.g. `Zrotation Yrotation Xrotation` means
R = Rz . Ry . Rx), in degrees; positions in the file's units.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from ..errors import PfnnError
from ..sim.rotation import axis_angle_matrix, matrix_to_euler_zyx
from ..sim.skeleton import JOINT_NAMES, PARENTS

_AXES = {"X": np.array([1.0, 0.0, 0.0]), "Y": np.array([0.0, 1.0, 0.0]), "Z": np.array([0.0, 0.0, 1.0])}


class BvhError(PfnnError):
    """A BVH file that cannot be parsed."""


@dataclasses.dataclass
class Motion:
    names: list[str]
    parents: np.ndarray             # (J,) parent index, -1 for the root
    offsets: np.ndarray             # (J, 3) rest offsets from the parent
    channels: list[list[str]]       # per joint, e.g. ["Xposition", ..., "Zrotation", ...]
    values: np.ndarray              # (T, total channels)
    frame_time: float
    end_sites: dict[int, np.ndarray] = dataclasses.field(default_factory=dict)

    @property
    def frames(self) -> int:
        return self.values.shape[0]

    def _joint_columns(self) -> list[tuple[int, list[str]]]:
        columns, start = [], 0
        for joint_channels in self.channels:
            columns.append((start, joint_channels))
            start += len(joint_channels)
        return columns

    def local_transforms(self) -> np.ndarray:
        """(T, J, 4, 4) local transforms from the channels and offsets."""
        frames, joints = self.frames, len(self.names)
        local = np.zeros((frames, joints, 4, 4))
        local[..., :3, :3] = np.eye(3)
        local[..., 3, 3] = 1.0
        local[..., :3, 3] = self.offsets
        for joint, (start, joint_channels) in enumerate(self._joint_columns()):
            rotation = np.broadcast_to(np.eye(3), (frames, 3, 3))
            for k, channel in enumerate(joint_channels):
                column = self.values[:, start + k]
                if channel.endswith("position"):
                    local[:, joint, "XYZ".index(channel[0]), 3] = column
                elif channel.endswith("rotation"):
                    axis = np.broadcast_to(_AXES[channel[0]], (frames, 3))
                    rotation = rotation @ axis_angle_matrix(axis, np.radians(column))
            local[:, joint, :3, :3] = rotation
        return local

    def global_transforms(self, scale: float = 1.0) -> np.ndarray:
        """(T, J, 4, 4) world transforms; positions multiplied by `scale`."""
        local = self.local_transforms()
        local[..., :3, 3] *= scale
        result = np.empty_like(local)
        for joint, parent in enumerate(self.parents):   # parents come first in a BVH
            result[:, joint] = local[:, joint] if parent < 0 else result[:, parent] @ local[:, joint]
        return result


def read_bvh(path: str | Path) -> Motion:
    path = Path(path)
    try:
        tokens = path.read_text(encoding="ascii", errors="strict").split()
    except (OSError, UnicodeDecodeError) as error:
        raise BvhError(f"cannot read ({error})", path) from None
    names, parents, offsets, channels, end_sites = [], [], [], [], {}
    stack: list[int] = []
    i = 0

    def expect(word):
        nonlocal i
        if i >= len(tokens) or tokens[i] != word:
            found = tokens[i] if i < len(tokens) else "end of file"
            raise BvhError(f"expected '{word}', found '{found}'", path)
        i += 1

    try:
        expect("HIERARCHY")
        pending_end = False
        while i < len(tokens) and tokens[i] != "MOTION":
            word = tokens[i]
            if word in ("ROOT", "JOINT"):
                names.append(tokens[i + 1])
                parents.append(stack[-1] if stack else -1)
                i += 2
                expect("{")
                stack.append(len(names) - 1)
                expect("OFFSET")
                offsets.append([float(v) for v in tokens[i:i + 3]])
                i += 3
                expect("CHANNELS")
                count = int(tokens[i])
                channels.append(tokens[i + 1:i + 1 + count])
                i += 1 + count
            elif word == "End":
                i += 2
                expect("{")
                expect("OFFSET")
                end_sites[stack[-1]] = np.array([float(v) for v in tokens[i:i + 3]])
                i += 3
                pending_end = True
            elif word == "}":
                if pending_end:
                    pending_end = False
                else:
                    stack.pop()
                i += 1
            else:
                raise BvhError(f"unexpected '{word}' in the hierarchy", path)
        expect("MOTION")
        expect("Frames:")
        frames = int(tokens[i])
        i += 1
        expect("Frame")
        expect("Time:")
        frame_time = float(tokens[i])
        i += 1
        total = sum(len(c) for c in channels)
        data = np.array(tokens[i:i + frames * total], dtype=np.float64)
    except (ValueError, IndexError) as error:
        raise BvhError(f"malformed ({error})", path) from None
    if data.size != frames * total:
        raise BvhError(f"has {data.size} motion values, expected {frames} frames x {total} channels", path)
    if not names:
        raise BvhError("no joints in the hierarchy", path)
    return Motion(names, np.array(parents), np.array(offsets), channels, data.reshape(frames, total),
                  frame_time, end_sites)


def write_bvh(motion: Motion, path: str | Path) -> None:
    """Write `motion` as BVH (tabs, 6 decimals)."""
    children: dict[int, list[int]] = {j: [] for j in range(len(motion.names))}
    for joint, parent in enumerate(motion.parents):
        if parent >= 0:
            children[int(parent)].append(joint)
    lines = ["HIERARCHY"]

    def emit(joint: int, depth: int) -> None:
        pad = "\t" * depth
        kind = "ROOT" if motion.parents[joint] < 0 else "JOINT"
        lines.append(f"{pad}{kind} {motion.names[joint]}")
        lines.append(pad + "{")
        lines.append(pad + "\tOFFSET " + " ".join(f"{v:.6f}" for v in motion.offsets[joint]))
        lines.append(pad + f"\tCHANNELS {len(motion.channels[joint])} " + " ".join(motion.channels[joint]))
        for child in children[joint]:
            emit(child, depth + 1)
        if not children[joint]:
            end = motion.end_sites.get(joint, np.zeros(3))
            lines.append(pad + "\tEnd Site")
            lines.append(pad + "\t{")
            lines.append(pad + "\t\tOFFSET " + " ".join(f"{v:.6f}" for v in end))
            lines.append(pad + "\t}")
        lines.append(pad + "}")

    emit(0, 0)
    lines += ["MOTION", f"Frames: {motion.frames}", f"Frame Time: {motion.frame_time:.8f}"]
    lines += [" ".join(f"{v:.6f}" for v in row) for row in motion.values]
    Path(path).write_text("\n".join(lines) + "\n", encoding="ascii")


def cmu_motion_from_world(world_rotations: np.ndarray, root_positions: np.ndarray, offsets: np.ndarray,
                          frame_time: float) -> Motion:
    """A clip in the 31-joint CMU hierarchy from every joint's world rotation (T, 31, 3, 3) and the
    root's path (T, 3): local rotations as CMU's channels (root `Xposition Yposition Zposition
    Zrotation Yrotation Xrotation`, the others `Zrotation Yrotation Xrotation`) on `offsets`."""
    frames = len(world_rotations)
    local = world_rotations.copy()
    local[:, 1:] = np.swapaxes(world_rotations[:, PARENTS[1:]], -1, -2) @ world_rotations[:, 1:]
    euler = np.degrees(matrix_to_euler_zyx(local))                     # (T, 31, 3) as Z, Y, X
    channels = [["Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"]]
    channels += [["Zrotation", "Yrotation", "Xrotation"]] * (len(JOINT_NAMES) - 1)
    values = np.concatenate([root_positions, euler.reshape(frames, -1)], axis=1)
    end_sites = {j: np.zeros(3) for j in range(len(JOINT_NAMES)) if not np.any(PARENTS == j)}
    return Motion(list(JOINT_NAMES), PARENTS.astype(int), offsets, channels, values, frame_time, end_sites)
