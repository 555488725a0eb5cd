"""CMU ASF/AMC clips: the reader against the BVH conversion of the same take, against clips of
other subjects written as ASF/AMC with every convention varied, malformed files, the ground
recovered from footsteps, and the trainer reading .amc clips."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from pfnn_demo.motion.acclaim import AcclaimError, CMU_BONE_OF_JOINT, load_amc, read_amc, read_asf
from pfnn_demo.motion.bvh import read_bvh
from pfnn_demo.sim.skeleton import JOINT_NAMES, PARENTS
from pfnn_demo.tools.train import labels
from pfnn_demo.tools.train.database import clip_from_motion, retarget_to_canonical, rest_aligned
from pfnn_demo.tools.train.pipeline import load_clips
from pfnn_demo.tools.train.synthesis import RollingGround, on_terrain

DATA = Path(__file__).resolve().parents[1] / "data"
AMC = DATA / "cmu-amc"


def positions(motion) -> np.ndarray:
    return motion.global_transforms()[..., :3, 3]


# --- the same take as the cgspeed BVH conversion -------------------------------------------------

def test_amc_gives_the_bvh_conversions_root_path_and_bone_directions():
    amc = load_amc(AMC / "02_01.amc")
    bvh = read_bvh(DATA / "cmu" / "02_01.bvh")
    assert amc.frame_time == pytest.approx(bvh.frame_time, rel=1e-4)
    # The conversion dropped the first frame and scaled the root's path by one factor.
    assert amc.frames == bvh.frames + 1
    ours, theirs = positions(amc)[1:], positions(bvh)
    scale = np.sum(ours[:, 0] * theirs[:, 0]) / np.sum(ours[:, 0] ** 2)
    assert np.abs(scale * ours[:, 0] - theirs[:, 0]).max() < 0.01
    # Every bone points the same way up to the conversion's own rest pose: a constant offset
    # per bone (its spread over the clip small), far below what a wrong axis or order gives.
    spreads, means = [], []
    for joint in range(1, len(JOINT_NAMES)):
        a = ours[:, joint] - ours[:, PARENTS[joint]]
        b = theirs[:, joint] - theirs[:, PARENTS[joint]]
        la, lb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
        if la.min() < 1e-6 or lb.min() < 1e-6:
            continue
        angle = np.degrees(np.arccos(np.clip(np.sum(a * b, axis=1) / la / lb, -1, 1)))
        means.append(angle.mean())
        spreads.append(np.ptp(angle))
    assert len(means) == 20
    assert max(means) < 17.0 and np.mean(means) < 6.0
    assert np.median(spreads) < 2.0 and max(spreads) < 17.0


def test_amc_retargeted_matches_the_bvh_retargeted_relative_to_the_hips():
    amc = retarget_to_canonical(load_amc(AMC / "02_01.amc"), align_rest=True)
    bvh = retarget_to_canonical(read_bvh(DATA / "cmu" / "02_01.bvh"), align_rest=True)
    ours, theirs = positions(amc)[1:], positions(bvh)
    error = np.linalg.norm((ours - ours[:, :1]) - (theirs - theirs[:, :1]), axis=-1)
    assert error.mean() < 0.5          # BVH units (5.6 cm): legs ~0.6-1.2, the body ~0.1
    assert error.max() < 2.0


def test_rest_alignment_keeps_every_joint_where_it_was():
    motion = load_amc(AMC / "03_03.amc")
    np.testing.assert_allclose(positions(rest_aligned(motion)), positions(motion), atol=1e-9)


# --- clips of other subjects, written as ASF/AMC with every convention varied --------------------

def write_acclaim(motion, folder: Path, rng: np.random.Generator, hold_bone: str = "lfingers",
                  length_unit: float = 1.0) -> tuple[Path, Path]:
    """A CMU-hierarchy BVH clip as ASF/AMC, written from the format's definition (scipy's Euler
    angles): random bone axes in random orders, random dof orders, radians, lengths in inches
    (`:units length 1`), CRLF, comments, and `hold_bone` left out of frames where it holds still."""
    scale = length_unit / 0.45
    local = motion.local_transforms()[..., :3, :3]
    children = {j: [c for c in range(len(PARENTS)) if PARENTS[c] == j] for j in range(len(PARENTS))}
    lines = ["# written by a test", ":version 1.10", ":name TEST", ":units", "  mass 1.0",
             f"  length {length_unit}", "  angle rad", ":documentation", "  made up axes"]
    root_order = "".join(rng.permutation(list("xyz")))
    root_axis = rng.uniform(-np.pi, np.pi, 3)
    C_root = Rotation.from_euler(root_order, root_axis).as_matrix()
    lines += [":root", "   order TX TY TZ " + " ".join("R" + a.upper() for a in root_order),
              f"   axis {root_order.upper()}", "   position 0 0 0", "   orientation " + " ".join(map(str, root_axis)),
              ":bonedata"]
    bones = {}
    for joint in range(1, len(JOINT_NAMES)):
        name = CMU_BONE_OF_JOINT[JOINT_NAMES[joint]]
        vector = motion.offsets[children[joint][0]] if children[joint] else np.zeros(3)
        length = np.linalg.norm(vector)
        direction = vector / length if length > 1e-9 else np.array([0.0, 0.0, 1.0])
        axis_order = "".join(rng.permutation(list("xyz")))
        angles = rng.uniform(-np.pi, np.pi, 3)
        dofs = ["r" + a for a in rng.permutation(list("xyz"))]
        bones[joint] = (name, Rotation.from_euler(axis_order, angles).as_matrix(), dofs)
        lines += ["  begin", f"     id {joint}", f"     name {name}",
                  "     direction " + " ".join(f"{v:.12f}" for v in direction), f"     length {length * scale:.12f}",
                  "     axis " + " ".join(f"{v:.12f}" for v in angles) + f"  {axis_order.upper()}",
                  "    dof " + " ".join(dofs), "  end"]
    lines += [":hierarchy", "  begin"]
    for joint in range(len(JOINT_NAMES)):
        if children[joint]:
            parent = "root" if joint == 0 else bones[joint][0]
            lines.append(f"    {parent} " + " ".join(bones[c][0] for c in children[joint]))
    lines += ["  end"]
    asf = folder / "99.asf"
    asf.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    frames = [":FULLY-SPECIFIED", ":RADIANS"]
    root_rotation = Rotation.from_matrix(C_root.T @ local[:, 0] @ C_root).as_euler(root_order)
    previous = {}
    for t in range(motion.frames):
        frames.append(str(t + 1))
        translation = motion.values[t, :3] * scale
        frames.append("root " + " ".join(f"{v:.12f}" for v in np.concatenate([translation, root_rotation[t]])))
        for joint, (name, C, dofs) in bones.items():
            values = Rotation.from_matrix(C.T @ local[t, joint] @ C).as_euler("".join(d[1] for d in dofs))
            if name == hold_bone and name in previous and np.allclose(values, previous[name], atol=1e-12):
                continue
            previous[name] = values
            frames.append(f"{name} " + " ".join(f"{v:.12f}" for v in values))
    amc = folder / "99_01.amc"
    amc.write_bytes(("\r\n".join(frames) + "\r\n").encode())
    return asf, amc


@pytest.mark.parametrize("clip", ["143_32.bvh", "16_41.bvh", "139_33.bvh"])
def test_clips_of_other_subjects_written_as_asf_amc_read_back_to_the_same_joints(clip, tmp_path):
    motion = read_bvh(DATA / "cmu" / clip)
    motion.values = motion.values[:120].copy()
    start, _ = motion._joint_columns()[JOINT_NAMES.index("LeftHandIndex1")]
    motion.values[:, start:start + 3] = motion.values[0, start:start + 3]      # a bone that holds still
    asf, amc = write_acclaim(motion, tmp_path, np.random.default_rng(len(clip)))
    assert sum(line.startswith(b"lfingers") for line in amc.read_bytes().splitlines()) == 1
    read = load_amc(amc)                                 # 99.asf beside 99_01.amc, as CMU lays them out
    np.testing.assert_allclose(positions(read), positions(motion), atol=1e-6)


def test_a_missing_bone_holds_its_previous_values_and_rest_before_it_appears(tmp_path):
    asf = tmp_path / "01.asf"
    shutil.copy(AMC / "02.asf", asf)
    text = "\n".join([":FULLY-SPECIFIED", ":DEGREES", "1", "root 0 0 0 0 0 0", "2", "root 0 0 0 0 0 0",
                      "lfemur 10 20 30", "3", "root 0 0 0 0 0 0", "4", "root 0 0 0 0 0 0", "lfemur 1 2 3"])
    (tmp_path / "01_01.amc").write_text(text)
    values = read_amc(tmp_path / "01_01.amc", read_asf(asf)).values["lfemur"]
    np.testing.assert_allclose(np.degrees(values), [[0, 0, 0], [10, 20, 30], [10, 20, 30], [1, 2, 3]])


# --- malformed files ---------------------------------------------------------------------------

ASF_BREAKAGES = {
    "no bonedata": (lambda t: t.replace(":bonedata", ":bones"), "no :bonedata"),
    "bad length unit": (lambda t: t.replace("length 0.45", "length -1"), "length unit must be positive"),
    "bad axis order": (lambda t: t.replace("axis 0 0 20  XYZ", "axis 0 0 20  XYY", 1), "not a permutation"),
    "text as a number": (lambda t: t.replace("length 7.59371", "length seven", 1), "not a number"),
    "unknown dof": (lambda t: t.replace("dof rx ry rz", "dof rx ry rw", 1), "unknown dof 'rw'"),
    "unknown bone in hierarchy": (lambda t: t.replace("lfemur ltibia", "lfemur lshin"), "'lshin', which is not a bone"),
}


@pytest.mark.parametrize("breakage", sorted(ASF_BREAKAGES))
def test_malformed_asf_is_refused_with_what_is_wrong(breakage, tmp_path):
    change, message = ASF_BREAKAGES[breakage]
    broken = tmp_path / "02.asf"
    broken.write_bytes(change((AMC / "02.asf").read_text(encoding="latin-1")).encode("latin-1"))
    with pytest.raises(AcclaimError, match=message):
        read_asf(broken)


AMC_BREAKAGES = {
    "too few values": ("1\nroot 1 2 3\n", "has 3 values, its skeleton gives it 6 dofs"),
    "unknown bone": ("1\nroot 0 0 0 0 0 0\ntail 1 2\n", "bone 'tail' is not in the skeleton"),
    "values before a frame": ("root 0 0 0 0 0 0\n", "before the first frame number"),
    "no frames": (":FULLY-SPECIFIED\n:DEGREES\n", "no frames"),
    "text as a number": ("1\nroot 0 0 0 0 zero 0\n", "not a number"),
}


@pytest.mark.parametrize("breakage", sorted(AMC_BREAKAGES))
def test_malformed_amc_is_refused_with_the_line(breakage, tmp_path):
    text, message = AMC_BREAKAGES[breakage]
    shutil.copy(AMC / "02.asf", tmp_path / "02.asf")
    (tmp_path / "02_09.amc").write_text(text)
    with pytest.raises(AcclaimError, match=message):
        load_amc(tmp_path / "02_09.amc")


def test_retarget_command_writes_a_bvh_and_refuses_mistakes_in_one_line(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "pfnn_demo", "retarget", *map(str, args)],
                              capture_output=True, text=True)

    done = run(AMC / "02_02.amc", tmp_path / "walk.bvh")
    assert done.returncode == 0, done.stderr
    written = read_bvh(tmp_path / "walk.bvh")
    assert written.frames == 298 and list(written.names) == list(JOINT_NAMES)
    shutil.copy(AMC / "02_02.amc", tmp_path / "77_01.amc")
    for args, message in (((tmp_path / "77_01.amc", tmp_path / "a.bvh"), "no skeleton 77.asf beside it"),
                          ((tmp_path / "77_01.amc", tmp_path / "a.bvh", "--asf", tmp_path / "no.asf"),
                           "no such skeleton file"),
                          ((AMC / "02_02.amc", tmp_path / "a.txt"), "must end in .bvh")):
        failed = run(*args)
        assert failed.returncode == 2
        assert message in failed.stderr and len(failed.stderr.strip().splitlines()) == 1
    assert run(tmp_path / "77_01.amc", tmp_path / "b.bvh", "--asf", AMC / "02.asf").returncode == 0


# --- the ground under a walk, from its footsteps -------------------------------------------------

def test_ground_recovered_from_footsteps_is_the_ground_walked_on():
    """A captured flat walk put on known rolling ground (as the synthesis does): the ground
    recovered from its footsteps alone is that ground, under the path and beside it."""
    walk = clip_from_motion(read_bvh(DATA / "cmu" / "143_32.bvh"), "walk")
    truth = RollingGround(np.random.default_rng(3), 30.0)
    on_hills = on_terrain(walk, truth)
    contacts = labels.foot_contacts(on_hills.positions, 60, by_height=False)
    recovered = labels.footstep_ground(on_hills.positions, contacts)
    path = on_hills.positions[:, 0].astype(np.float64)
    relief = np.ptp(truth(path[:, 0], path[:, 2]))
    assert relief > 15.0
    under = recovered(path[:, 0], path[:, 2]) - truth(path[:, 0], path[:, 2])
    offset = np.median(under)           # the clip is stood on its own level: compare shapes
    assert np.abs(under - offset).max() < 0.25 * relief
    assert np.abs(under - offset).mean() < 0.1 * relief


def test_the_uneven_terrain_walk_stands_on_its_recovered_ground():
    clip = next(c for c in load_clips(AMC, log=lambda text: None) if c.name == "03_03")
    assert clip.ground is not None and clip.category == "uneven"
    hips_ground = clip.ground(clip.positions[:, 0, 0], clip.positions[:, 0, 2])
    assert np.ptp(hips_ground) > 25.0                   # it climbs and descends (0.3-0.4 m)
    assert clip.contacts.mean() > 0.3                   # every step found, on high ground too
    toes = clip.positions[:, [5, 10]]
    planted = clip.contacts[:, [1, 3]] > 0.5
    above = toes[..., 1] - clip.ground(toes[..., 0], toes[..., 2])
    assert np.abs(np.median(above[planted]) - labels.TOE_REST) < 1.5
    assert np.percentile(np.abs(above[planted] - labels.TOE_REST), 90) < 4.0    # neither float nor sink
    assert np.percentile(above[~planted], 1) > -6.0


# --- training reads .amc clips as it reads BVH ---------------------------------------------------

def test_training_reads_amc_clips_with_their_manifest(tmp_path):
    for name in ("02.asf", "02_01.amc", "02_02.amc"):
        shutil.copy(AMC / name, tmp_path / name)
    (tmp_path / "clips.json").write_text(json.dumps({"clips": {
        "02_01.amc": {"category": "walk", "use": "skip"}, "02_02.amc": {"category": "walk-fast", "use": "cycle"}}}))
    clips = load_clips(tmp_path, log=lambda text: None)
    assert [c.name for c in clips] == ["02_02"]
    walk = clips[0]
    assert walk.category == "walk-fast" and not walk.one_shot and walk.source == "cmu"
    speed = np.linalg.norm(walk.positions[-1, 0, [0, 2]] - walk.positions[0, 0, [0, 2]]) / (walk.frames / 60)
    assert 140 < speed < 180                            # the README's 1.6 m/s
    assert walk.gaits[:, 1].mean() > 0.9
