"""The README's diagram and ARCHITECTURE.md name what `git ls-files agent_cli` holds: a module or a
package added, renamed or removed without them failing here."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS_SHOWN_WHOLE = ("tui/widgets", "tui/screens")  # one widget or modal per module: named as a folder


def _tracked() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "agent_cli"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [line.removeprefix("agent_cli/") for line in out.splitlines() if line.endswith(".py")]


def _diagram() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Architecture") :]
    return section[section.index("```\nagent_cli/") : section.index("```", section.index("```") + 3)]


def _expected() -> tuple[set[str], set[str]]:
    """(module names, folder names) the diagram must show."""
    modules, folders = set(), set()
    for path in _tracked():
        parts = path.split("/")
        folders.update(parts[:-1])
        folder = "/".join(parts[:-1])
        if parts[-1] != "__init__.py" and folder not in FOLDERS_SHOWN_WHOLE:
            modules.add(parts[-1].removesuffix(".py"))
    return modules, folders


def test_the_readme_diagram_names_every_module_and_folder():
    diagram = _diagram()
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", diagram))
    shown_folders = set(re.findall(r"([a-z_]+)/", diagram))
    modules, folders = _expected()
    assert not modules - words, f"modules missing from the README diagram: {sorted(modules - words)}"
    assert not folders - shown_folders, f"folders missing from the diagram: {sorted(folders - shown_folders)}"


def test_the_readme_diagram_names_nothing_that_is_gone():
    modules, folders = _expected()
    known = modules | folders | {"agent_cli", "__main__"}
    gone = []
    for line in _diagram().splitlines()[1:]:
        body = re.sub(r"^[a-z_]+/\s+", "", line.replace("│", " ").strip() + " ")
        for piece in body.replace("(", " ").replace(")", " ").split("·"):
            name = re.match(r"\s*([a-z_]+)", piece)
            if name and name.group(1) not in known:
                gone.append(name.group(1))
    assert not gone, f"the README diagram names modules that do not exist: {gone}"


def test_architecture_md_names_every_package():
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    packages = {p.split("/")[0] for p in _tracked() if "/" in p}
    missing = sorted(p for p in packages if f"`{p}/`" not in text)
    assert not missing, f"ARCHITECTURE.md does not name: {missing}"
