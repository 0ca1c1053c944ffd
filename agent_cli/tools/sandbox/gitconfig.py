"""Which settings in a git `config` file make git run a program (or read another file that may): the
ones a sandboxed command must not leave in a git directory, since git runs them unconfined at the
person's next git command there (gitdirs.py finds such directories and sets those files aside).

The file is read by git itself (`git config --file F --no-includes --list`, nothing run, no include
followed), so what is judged is what git would see; without git, by a small reader that errs toward
finding a key. From git-config(1): core.fsmonitor (unless a boolean: git's own daemon), core.hooksPath,
core.sshCommand, core.pager, core.editor, core.askPass, core.gitProxy, core.alternateRefsCommand,
sequence.editor, diff.external, diff.*.command and textconv, difftool/mergetool.*.cmd and path,
merge.*.driver, filter.*.clean, smudge and process, credential(.*).helper, alias.* starting with `!`,
gpg.program, gpg.*.program, gpg.ssh.defaultKeyCommand, include.path, includeIf.*.path,
remote.*.uploadpack and receivepack, pager.*, interactive.diffFilter, web.browser,
browser/man.*.cmd and path, guitool.*.cmd, tar.*.command, trailer.*.command and cmd, sendemail.*, imap.tunnel, instaweb.*,
protocol(.*).allow (`ext::` runs a command), submodule.*.update starting with `!`. What `git init`
writes, user.*, remote.*.url/fetch and branch.* are ordinary.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

GIT_TIMEOUT = 10.0
UNREADABLE = "(a config git cannot read)"
BOOLEANS = ("", "true", "false", "yes", "no", "on", "off", "1", "0")
# (section, name): a program whatever the subsection ("*": any name in the section)
_ANY_SUB = {
    ("diff", "command"),
    ("diff", "textconv"),
    ("difftool", "cmd"),
    ("difftool", "path"),
    ("mergetool", "cmd"),
    ("mergetool", "path"),
    ("merge", "driver"),
    ("filter", "clean"),
    ("filter", "smudge"),
    ("filter", "process"),
    ("credential", "helper"),
    ("gpg", "program"),
    ("gpg", "defaultkeycommand"),
    ("include", "path"),
    ("includeif", "path"),
    ("remote", "uploadpack"),
    ("remote", "receivepack"),
    ("browser", "cmd"),
    ("browser", "path"),
    ("man", "cmd"),
    ("man", "path"),
    ("guitool", "cmd"),
    ("tar", "command"),
    ("trailer", "command"),
    ("trailer", "cmd"),
    ("protocol", "allow"),
    ("pager", "*"),
    ("sendemail", "*"),
    ("instaweb", "*"),
}
_PLAIN = {
    ("core", "hookspath"),
    ("core", "sshcommand"),
    ("core", "pager"),
    ("core", "editor"),
    ("core", "askpass"),
    ("core", "gitproxy"),
    ("core", "alternaterefscommand"),
    ("sequence", "editor"),
    ("diff", "external"),
    ("interactive", "difffilter"),
    ("web", "browser"),
    ("imap", "tunnel"),
}


def runs_program(key: str, value: str) -> bool:
    """Whether `section.[subsection.]name = value` makes git run a program (or read another config)."""
    section, _, rest = key.partition(".")
    sub, _, name = rest.rpartition(".")
    section, name = section.lower(), name.lower()
    if (section, name) in _ANY_SUB or (section, "*") in _ANY_SUB:
        return True
    if sub:
        return section in ("alias", "submodule") and value.lstrip().startswith("!")
    if section == "core" and name == "fsmonitor":
        return value.strip().lower() not in BOOLEANS
    return (section, name) in _PLAIN or (section == "alias" and value.lstrip().startswith("!"))


def programs(config: Path) -> list[str]:
    """The keys of `config` that make git run a program, each once, in file order; [UNREADABLE] when
    git cannot read the file (git would refuse the repository; it is set aside all the same)."""
    pairs = _read_with_git(config)
    if pairs is None:
        try:
            pairs = _read(config.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return []
    if pairs == [(UNREADABLE, "")]:
        return [UNREADABLE]
    return list(dict.fromkeys(key for key, value in pairs if runs_program(key, value)))


def _read_with_git(config: Path) -> list[tuple[str, str]] | None:
    """(key, value) as git reads them; None when there is no git to ask."""
    git = shutil.which("git")
    if git is None:
        return None
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": "/nonexistent",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CEILING_DIRECTORIES": "/",
    }
    try:
        done = subprocess.run(
            [git, "config", "--file", os.path.abspath(config), "--no-includes", "--null", "--list"],
            cwd="/",
            env=env,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return [(UNREADABLE, "")] if os.path.exists(config) else []
    out = []
    for entry in done.stdout.decode("utf-8", "replace").split("\0"):
        if entry:
            key, _, value = entry.partition("\n")
            out.append((key, value))
    return out


_HEADER = re.compile(r'^\s*\[\s*([^\]\s"]+)\s*(?:"((?:[^"\\]|\\.)*)")?\s*\](.*)$')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def _read(text: str) -> list[tuple[str, str]]:
    """A small reader of git's config syntax, for when git is missing: `[section "sub"]`,
    `[section.sub]`, `name = value` (also after a header on its line). A line it cannot read counts
    as UNREADABLE."""
    out: list[tuple[str, str]] = []
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if header := _HEADER.match(line):
            section = header.group(1) + (f".{header.group(2)}" if header.group(2) is not None else "")
            line = header.group(3).strip()
            if not line or line[0] in "#;":
                continue
        entry = _ENTRY.match(line)
        if entry is None or not section:
            return [(UNREADABLE, "")]
        out.append((f"{section}.{entry.group(1)}", (entry.group(2) or "").strip().strip('"')))
    return out


__all__ = ["UNREADABLE", "programs", "runs_program"]
