"""Imports flow one way (ARCHITECTURE.md): core <- context, llm, tools <- session, settings <-
extensions <- agent <- tui, replay, api <- acp, batch <- cli. Each package's __init__ docstring says what it may
import;
these tests hold the code to it, and hold the docstrings to the floors below."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "agent_cli"

# what each package may import from our own package: the floors. A package's __init__ docstring
# must say the same ("May import: ..."), so a reader of the package sees its rule where it lives.
ALLOWED = {
    "core": {"core"},
    "context": {"core", "context"},
    "llm": {"core", "llm"},
    "tools": {"core", "tools"},
    "session": {"core", "context", "session"},
    "settings": {"core", "context", "llm", "tools", "settings"},
    "extensions": {"core", "context", "llm", "tools", "settings", "extensions"},
    "agent": {"core", "context", "llm", "tools", "session", "settings", "extensions", "agent"},
    "tui": {"core", "agent", "tui"},
    "replay": {"core", "context", "llm", "tools", "replay"},
    "api": {"core", "context", "llm", "tools", "session", "settings", "extensions", "agent", "api"},
    "acp": {"core", "tools", "agent", "api", "acp"},
    "batch": {
        "core",
        "context",
        "llm",
        "tools",
        "session",
        "settings",
        "extensions",
        "agent",
        "api",
        "batch",
    },
    "cli": {
        "core",
        "context",
        "llm",
        "tools",
        "session",
        "settings",
        "extensions",
        "agent",
        "tui",
        "replay",
        "api",
        "acp",
        "batch",
        "cli",
    },
}
THIRD_PARTY_BANNED = {
    # nothing below tui imports textual; nothing below cli imports typer
    "core": {"textual", "typer", "anthropic"},
    "context": {"textual", "typer", "anthropic", "httpx", "httpx2"},
    "llm": {"textual", "typer"},
    "tools": {"textual", "typer", "anthropic"},
    "session": {"textual", "typer", "anthropic"},
    "settings": {"textual", "typer", "anthropic"},
    "extensions": {"textual", "typer", "anthropic"},
    "agent": {"textual", "typer"},
    "tui": {"typer"},
    "replay": {"textual", "typer"},
    "api": {"textual", "typer", "anthropic"},
    "acp": {"textual", "typer", "anthropic"},
    "batch": {"textual", "typer", "anthropic"},
}
MAX_MODULE_LINES = 420
MAX_SIDE_BY_SIDE = {"agent": 16}  # the turn's room stays small enough to read as a list
MAX_SIDE_BY_SIDE_ELSEWHERE = 24


def _declared(package: str) -> set[str]:
    """The packages `agent_cli/<package>/__init__.py`'s docstring says it may import."""
    doc = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text(encoding="utf-8"))) or ""
    found = re.search(r"^May import: (.+?)\.$", doc, re.MULTILINE)
    assert found, f"{package}/__init__.py: the docstring has no 'May import: ...' line"
    words = {w.strip() for w in found.group(1).split(",")}
    return set(ALLOWED) if words == {"everything"} else words


def _layer(path: Path, root: Path = PACKAGE) -> str:
    rel = path.relative_to(root)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(module, line, at_module_level) for every import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[str, int, bool]] = []
    top_level = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno, id(node) in top_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, node.lineno, id(node) in top_level))
    return out


def test_imports_follow_the_layers():
    problems = _layering_problems(PACKAGE)
    assert not problems, "layering violations:\n" + "\n".join(problems)


def _layering_problems(root: Path) -> list[str]:
    """Every import in the package at `root` that its layer may not make."""
    problems = []
    for path in sorted(root.rglob("*.py")):
        layer = _layer(path, root)
        if layer == "__init__":
            continue
        for module, line, _ in _imports(path):
            parts = module.split(".")
            if parts[0] == "agent_cli" and len(parts) > 1:
                target = parts[1]
                if target in ("__init__",) or target not in ALLOWED:
                    continue
                if target not in ALLOWED.get(layer, set()):
                    problems.append(f"{path.relative_to(root)}:{line} ({layer}) imports agent_cli.{target}")
            elif parts[0] in THIRD_PARTY_BANNED.get(layer, set()):
                problems.append(f"{path.relative_to(root)}:{line} ({layer}) imports {parts[0]}")
    return problems


def _copy_with(tmp_path: Path, probe: str, text: str) -> Path:
    """A copy of the package with one more module, `probe` (the real package is left alone: the other
    checks read it at the same time on other test workers)."""
    root = tmp_path / "agent_cli"
    shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / probe).write_text(text, encoding="utf-8")
    return root


def test_the_sdk_is_never_imported_at_module_level():
    """`import anthropic` costs ~1.8 s (the `mcp` SDK ~1 s): --version, --help, sessions and replay
    must not pay for them."""
    offenders = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for module, line, top in _imports(path)
        if top and module.split(".")[0] in ("anthropic", "openai", "mcp", "mcp_types", "httpx2")
    ]
    assert not offenders, offenders


def test_the_checker_sees_a_violation(tmp_path):
    """The rule above can fail: a core module importing tui is reported."""
    root = _copy_with(tmp_path, "core/_layering_probe.py", "from agent_cli.tui import app\n")
    assert _layering_problems(root) == ["core/_layering_probe.py:1 (core) imports agent_cli.tui"]


def test_help_and_version_do_not_load_the_mcp_sdk():
    import subprocess
    import sys

    code = (
        "import sys\nfrom agent_cli import cli\n"
        "for argv in (['--version'], ['--help'], ['mcp', '--help']):\n"
        "    try:\n        cli.main(argv)\n    except SystemExit:\n        pass\n"
        "print(sorted(m for m in ('mcp', 'anthropic', 'acp') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def _import_graph(directory: Path, package: str = "agent") -> dict[str, set[str]]:
    """module -> the modules of agent_cli/<package>/ it imports, counting every import (lazy and
    TYPE_CHECKING too). Modules are dotted paths under the package (`runner`, `mcp.runtime`); a
    package is its __init__."""

    def name(path: Path) -> str:
        parts = list(path.relative_to(directory).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name(p) for p in directory.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in sorted(directory.rglob("*.py")):
        deps = graph.setdefault(name(path), set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                base = node.module.split(".")
                if base[:2] == ["agent_cli", package]:
                    inner = ".".join(base[2:])
                    targets = [f"{inner}.{a.name}" if inner else a.name for a in node.names] + [inner]
            elif isinstance(node, ast.Import):
                targets = [
                    a.name.split(".", 2)[2] for a in node.names if a.name.startswith(f"agent_cli.{package}.")
                ]
            deps.update(t for t in targets if t in modules)
        deps.discard(name(path))
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    from graphlib import CycleError, TopologicalSorter

    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        return list(exc.args[1])
    return None


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_no_package_has_an_import_cycle(package):
    cycle = _cycle(_import_graph(PACKAGE / package, package))
    assert cycle is None, f"import cycle in {package}/: " + " -> ".join(cycle or [])


def test_the_cycle_check_sees_a_cycle(tmp_path):
    (tmp_path / "a.py").write_text("from agent_cli.agent.b import x\n", encoding="utf-8")
    (tmp_path / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agent_cli.agent import a\n",
        encoding="utf-8",
    )
    assert sorted(set(_cycle(_import_graph(tmp_path)) or [])) == ["a", "b"]


def test_every_package_is_on_a_floor_and_its_docstring_says_its_rule():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(ALLOWED), (
        f"packages without a floor (or floors without a package): {packages ^ set(ALLOWED)}"
    )
    wrong = {
        name: sorted(_declared(name) ^ ALLOWED[name]) for name in ALLOWED if _declared(name) != ALLOWED[name]
    }
    assert not wrong, f"__init__ docstrings that disagree with the floors: {wrong}"


def test_importing_the_loop_from_session_fails_the_check(tmp_path):
    """session/ is persistence and recovery: it never depends on the loop."""
    root = _copy_with(
        tmp_path,
        "session/_layering_probe.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agent_cli.agent.loop import Loop\n",
    )
    assert _layering_problems(root) == ["session/_layering_probe.py:3 (session) imports agent_cli.agent"]


def test_no_module_is_too_long_and_no_folder_too_crowded():
    long = [
        f"{p.relative_to(PACKAGE)}: {n} lines"
        for p in sorted(PACKAGE.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    crowded = []
    for folder in sorted({p.parent for p in PACKAGE.rglob("*.py")}):
        count = sum(1 for _ in folder.glob("*.py"))
        limit = MAX_SIDE_BY_SIDE.get(str(folder.relative_to(PACKAGE)), MAX_SIDE_BY_SIDE_ELSEWHERE)
        if count > limit:
            crowded.append(f"{folder.relative_to(PACKAGE)}/: {count} modules (at most {limit})")
    assert not long and not crowded, "\n".join(long + crowded)
