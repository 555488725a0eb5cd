"""BVH reading, writing and forward kinematics, on an openly licensed CMU clip when present."""

from __future__ import annotations

import numpy as np
import pytest

from pfnn_demo.motion.bvh import BvhError, read_bvh, write_bvh
from pfnn_demo.sim.skeleton import BVH_TO_DEMO_UNITS, JOINT_NAMES, REST_OFFSETS

from conftest import require_shared

SMALL = """HIERARCHY
ROOT Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
\tJOINT Leg
\t{
\t\tOFFSET 0 -10 0
\t\tCHANNELS 3 Zrotation Yrotation Xrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 -10 0
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.008333
0 100 0 0 0 0 0 0 0
5 100 0 0 90 0 90 0 0
"""


def test_small_hierarchy_forward_kinematics(tmp_path):
    path = tmp_path / "small.bvh"
    path.write_text(SMALL)
    motion = read_bvh(path)
    assert motion.names == ["Hips", "Leg"] and list(motion.parents) == [-1, 0]
    world = motion.global_transforms()
    np.testing.assert_allclose(world[0, 1, :3, 3], [0, 90, 0], atol=1e-9)
    # Frame 1: root moved 5 along x and turned 90 degrees about Y; the leg (90 about Z) points along +x.
    np.testing.assert_allclose(world[1, 0, :3, 3], [5, 100, 0], atol=1e-9)
    np.testing.assert_allclose(world[1, 1, :3, 3], [5, 90, 0], atol=1e-9)
    leg_axis = world[1, 1, :3, :3] @ np.array([0, -1, 0])
    np.testing.assert_allclose(leg_axis, [0, 0, -1], atol=1e-9)


def test_round_trip(tmp_path):
    path = tmp_path / "small.bvh"
    path.write_text(SMALL)
    motion = read_bvh(path)
    write_bvh(motion, tmp_path / "again.bvh")
    again = read_bvh(tmp_path / "again.bvh")
    np.testing.assert_allclose(again.values, motion.values)
    np.testing.assert_allclose(again.global_transforms(), motion.global_transforms(), atol=1e-9)


def test_cmu_clip_has_the_runtime_skeleton():
    motion = read_bvh(require_shared("data/cmu/02_01.bvh"))
    assert motion.names == list(JOINT_NAMES) and motion.frames == 342
    np.testing.assert_allclose(motion.offsets * BVH_TO_DEMO_UNITS, REST_OFFSETS, atol=1e-3)
    world = motion.global_transforms(BVH_TO_DEMO_UNITS)
    head_height = world[:, 16, 1, 3] - np.minimum(world[:, 5, 1, 3], world[:, 10, 1, 3])
    assert 125 < np.median(head_height) < 150       # a standing person in the demo's units


@pytest.mark.parametrize("text, message", [
    ("HIERARCHY\nROOT Hips\n{\nOFFSET 0 0\n", "malformed|expected"),
    ("MOTION\n", "expected 'HIERARCHY'"),
    (SMALL.replace("5 100 0 0 90 0 90 0 0", "5 100 0"), "expected 2 frames x 9 channels"),
])
def test_malformed_files(tmp_path, text, message):
    path = tmp_path / "bad.bvh"
    path.write_text(text)
    with pytest.raises(BvhError, match=message):
        read_bvh(path)
