"""The README and the guides: every relative link and picture resolves (heading anchors too),
the README stays a front door, the library example is the same in both places, and the guides'
quick commands run as written."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

PAGES = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
RUNS = "<!-- runs in tests -->"


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [target for target in LINK.findall(text) if not target.startswith(("http://", "https://", "mailto:"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_and_picture_resolves(page):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{target} (no heading '{anchor}' in {destination.name})")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_the_readme_is_a_front_door():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 300
    first_screen = "\n".join(lines[:25])
    assert "pip install . && pfnn-demo --mode cubic" in first_screen
    assert "python -m pytest -q" in first_screen
    guides = {target.partition("#")[0] for target in links(REPO / "README.md") if target.startswith("docs/")}
    every_guide = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")}
    assert every_guide <= guides, f"guides the README does not lead to: {sorted(every_guide - guides)}"


def test_the_library_example_is_the_same_in_the_readme_and_its_guide():
    def example(page: Path) -> str:
        match = re.search(r"<!-- library-example -->\s*```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
        assert match, f"{page.name} lost its library example"
        return match.group(1)

    assert example(REPO / "README.md") == example(REPO / "docs" / "library.md")


def quick_commands() -> list[tuple[str, list[str]]]:
    """(guide, commands) of every block marked RUNS: the indented lines after the marker."""
    blocks = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for k, line in enumerate(lines):
            if line.strip() != RUNS:
                continue
            commands, current = [], ""
            for following in lines[k + 1:]:
                if not following.startswith("    "):
                    break
                current += following.strip().rstrip("\\") + " "
                if not following.rstrip().endswith("\\"):
                    commands.append(current.strip())
                    current = ""
            blocks.append((f"{page.name}:{k + 1}", commands))
    return blocks


@pytest.mark.parametrize("where,commands", quick_commands(), ids=[b[0] for b in quick_commands()])
def test_the_guides_quick_commands_run(where, commands, tmp_path):
    assert commands, f"{where}: an empty runnable block"
    for folder in ("data", "scripts", "heightmaps", "docs", "characters", "network"):
        (tmp_path / folder).symlink_to(REPO / folder)
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "pfnn-demo", f"{where}: {command}"
        done = subprocess.run([sys.executable, "-m", "pfnn_demo", *words[1:]], cwd=tmp_path, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"{where}: {command}\n{done.stderr}"
        assert "Traceback" not in done.stderr
