"""The wheel holds every module and data folder (a plain `pip install .` must work): built here,
from a copy of the sources, and opened."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import REPO

SOURCES = ("pyproject.toml", "README.md", "LICENSE", "pfnn_demo", "shaders", "network", "heightmaps", "scripts",
           "characters")
DATA_FOLDERS = {"shaders": "*", "network": "*", "heightmaps": "*", "scripts": "*.json", "characters": "*"}


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory) -> set[str]:
    source, dist = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    for name in SOURCES:       # a copy: the build leaves build/ and egg-info behind
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(
            REPO / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if (REPO / name).is_dir() else {}))
    # Without build isolation: the test extra installs setuptools, so no download is needed.
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                             "-w", str(dist), str(source)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    wheels = list(dist.glob("pfnn_demo-*.whl"))
    assert len(wheels) == 1, wheels
    with zipfile.ZipFile(wheels[0]) as wheel:
        return set(wheel.namelist())


def test_the_wheel_holds_every_module(wheel_names):
    modules = {path.relative_to(REPO).as_posix() for path in (REPO / "pfnn_demo").rglob("*.py")}
    assert modules and modules <= wheel_names, sorted(modules - wheel_names)


@pytest.mark.parametrize("folder", sorted(DATA_FOLDERS))
def test_the_wheel_holds_every_data_file_inside_the_package(wheel_names, folder):
    files = {f"pfnn_demo/{folder}/{path.name}" for path in (REPO / folder).glob(DATA_FOLDERS[folder]) if path.is_file()}
    assert files, folder
    assert files <= wheel_names, sorted(files - wheel_names)
