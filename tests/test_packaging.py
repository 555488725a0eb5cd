"""The wheel holds every subpackage and data folder (a plain `pip install .` must work)."""

from __future__ import annotations

import tomllib

from conftest import REPO


def test_every_subpackage_and_data_folder_is_packaged():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    code = {".".join(path.parent.relative_to(REPO).parts) for path in (REPO / "pfnn_demo").rglob("__init__.py")}
    assert code <= listed, f"subpackages missing from pyproject's packages: {sorted(code - listed)}"
    for folder in ("shaders", "network", "heightmaps", "scripts"):
        assert config["package-dir"][f"pfnn_demo.{folder}"] == folder
        assert f"pfnn_demo.{folder}" in config["package-data"]
