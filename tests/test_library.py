"""The public API: the README's library example runs as written, and says what it should."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np

import pfnn_demo
from conftest import REPO


def readme_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- library-example -->\s*```python\n(.*?)```", text, re.S)
    assert match, "the README lost its library example"
    return match.group(1)


def test_the_readme_example_runs_and_prints_the_pose():
    code = readme_example() + ("\nimport sys\nassert not [m for m in ('pygame', 'moderngl') if m in sys.modules]\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    phase = float(re.search(r"phase (\S+) rad", result.stdout).group(1))
    assert 0 <= phase < 2 * np.pi
    assert "planted (L heel, L toe, R heel, R toe): [" in result.stdout
    assert 12 <= len(code.strip().splitlines()) <= 25


def test_the_example_moves_the_character_the_way_it_was_asked():
    """The same steps as the example: walking forward then jogging to the left moves the root
    forward (camera at yaw 0 looks along -X), then toward +Z, faster."""
    controller = pfnn_demo.Controller(pfnn_demo.load_network(), pfnn_demo.load_scene("hills"))
    start = controller.pose().root_position
    for _ in range(120):
        controller.step(pfnn_demo.InputState(move_y=1.0))
    walked = controller.pose().root_position - start
    for _ in range(120):
        controller.step(pfnn_demo.InputState(move_x=-1.0, jog=1.0))
    pose = controller.pose()
    jogged = pose.root_position - start - walked
    # From standing facing +Z it first turns to -X (the shipped network turns in a wide arc).
    assert walked[0] < -40
    assert jogged[2] > 100 and np.hypot(jogged[0], jogged[2]) > np.hypot(walked[0], walked[2])
    assert pose.joint_positions.shape == (31, 3) and pose.joint_rotations.shape == (31, 3, 3)
    np.testing.assert_allclose(pose.joint_rotations @ np.swapaxes(pose.joint_rotations, -1, -2),
                               np.broadcast_to(np.eye(3), (31, 3, 3)), atol=1e-4)
    assert pose.trajectory_positions.shape == (12, 3)


def test_every_exported_name_is_what_the_api_promises():
    classes = {"Controller", "Pose", "Crowd", "Controls", "CrowdBehaviour", "InputState", "InputScript", "Scene",
               "PhaseFunctionedNetwork", "Recorder", "Recording"}
    functions = {"load_network", "load_scene", "scene_files", "load_recording", "spawn_points"}
    errors = {"PfnnError", "NetworkOutputError"}
    constants = {"MODES", "JOINT_NAMES", "PARENTS", "REST_OFFSETS", "__version__"}
    assert set(pfnn_demo.__all__) == classes | functions | errors | constants
    namespace: dict = {}
    exec("from pfnn_demo import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(pfnn_demo.__all__)
    assert all(isinstance(namespace[name], type) for name in classes)
    assert all(callable(namespace[name]) and not isinstance(namespace[name], type) for name in functions)
    assert issubclass(pfnn_demo.NetworkOutputError, pfnn_demo.PfnnError) and issubclass(pfnn_demo.PfnnError, Exception)
    assert set(pfnn_demo.MODES) == {"constant", "linear", "cubic"}
    assert len(pfnn_demo.JOINT_NAMES) == len(pfnn_demo.PARENTS) == len(pfnn_demo.REST_OFFSETS) == 31
    assert pfnn_demo.PARENTS[0] == -1 and np.all(pfnn_demo.PARENTS[1:] < np.arange(1, 31))   # parents first
    version = re.search(r'^version = "(.+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    assert pfnn_demo.__version__ == version
