"""What some programs and builtins do beyond their name: options that run another program or write a
file, and builtins that define what later commands mean.

A prefix rule names a program and trusts its arguments; for these it is not enough. Each handler
returns a risk (a prefix or wildcard rule then does not allow the command; an exact rule or a bare
`Bash` still can) or reports a doubt to the sink:
- options that run a program or write a file: `git -c`/`--config-env`/`--exec-path`, `git diff
  --output`/`--ext-diff`, `git grep -O`, `git rebase --exec`, `git fetch --upload-pack`…, `sort
  --compress-program`/`-o`, `sed -i`/`-f` and a sed script with `e`/`w`, `awk` programs that call
  `system` or pipe or write, `tar --to-command`/`--checkpoint-action`/`-I`, `rg --pre`, `zip -TT`,
  `rsync -e`, `ssh -o`, `man -P`, `find -delete`/`-fprint`;
- builtins that take a variable name and evaluate its subscript as arithmetic (`printf -v`, `read`,
  `test -v`, `declare`, `unset`, `let`…), namerefs and integer variables, `export` of a variable that
  makes programs run others, `alias`, `enable`, `hash -p`; `cd`/`pushd` (later relative paths move).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agent_cli.tools.shell.env import is_name, runs_code, split_assignment
from agent_cli.tools.shell.model import Sink, Word

# Options (long, `-x` short, or a single-dash long word for find) that run a program or write a file.
RISKY_OPTIONS: dict[str, tuple[str, ...]] = {
    "sort": ("--compress-program", "-o", "--output"),
    "rg": ("--pre", "--hostname-bin"),
    "tar": (
        "--to-command",
        "--checkpoint-action",
        "-I",
        "--use-compress-program",
        "--info-script",
        "-F",
        "--new-volume-script",
        "--rsh-command",
        "--rmt-command",
    ),
    "zip": ("-TT", "--unzip-command"),
    "rsync": ("-e", "--rsh", "--rsync-path"),
    "ssh": ("-o", "-F"),
    "scp": ("-o", "-F", "-S"),
    "sftp": ("-o", "-F", "-S"),
    "man": ("-P", "--pager", "-H", "--html"),
    "sed": ("-i", "--in-place", "-f", "--file"),
    "awk": ("-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec"),
}
for _awk in ("gawk", "mawk", "nawk"):
    RISKY_OPTIONS[_awk] = RISKY_OPTIONS["awk"]
RISKY_OPTIONS["gsed"] = RISKY_OPTIONS["sed"]
FIND_WRITES = ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls")
FIND_EXEC = ("-exec", "-execdir", "-ok", "-okdir")
GIT_GLOBAL_RISKS = ("-c", "--config-env", "--exec-path")
GIT_GLOBAL_WITH_ARG = (
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
)
GIT_RISKS: dict[str, tuple[str, ...]] = {
    "*": (
        "--output",
        "--ext-diff",
        "--open-files-in-pager",
        "--upload-pack",
        "--receive-pack",
        "--exec",
        "--extcmd",
    ),
    "grep": ("-O",),
    "rebase": ("-x",),
    "difftool": ("-x", "-t", "--tool"),
    "mergetool": ("-t", "--tool"),
    "clone": ("-u",),
    "format-patch": ("-o", "--output-directory"),
}
GIT_RUNNERS = {"bisect": "run", "submodule": "foreach", "filter-branch": "", "filter-repo": ""}
NAME_BUILTINS = frozenset(
    {
        "read",
        "mapfile",
        "readarray",
        "unset",
        "declare",
        "typeset",
        "local",
        "export",
        "readonly",
        "getopts",
        "wait",
    }
)
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _has_option(words: tuple[str, ...], options: tuple[str, ...]) -> str:
    """The first of `options` among `words` (`--opt`, `--opt=v`, `-o`, `-ovalue`, `-abo` clusters)."""
    for word in words:
        for option in options:
            if word == option or word.startswith(option + "="):
                return option
            if len(option) == 2 and word.startswith("-") and not word.startswith("--"):
                if option[1] in word[1:] and not word[1:].isdigit():
                    return option
            elif option.startswith("-") and not option.startswith("--") and word.startswith(option):
                return option
    return ""


def _options(program: str, texts: tuple[str, ...], words: list[Word], sink: Sink) -> str:
    if any(w.glob and w.text[:1] in "*?[{" for w in words[1:]):
        sink.doubt(f"an unquoted glob in `{program}`'s arguments could expand to an option")
    found = _has_option(texts[1:], RISKY_OPTIONS[program])
    if found:
        return f"`{program} {found}` runs another program or writes a file"
    if program in ("sed", "gsed") and _sed_runs_or_writes(texts[1:]):
        return "the sed script runs a command or writes a file (e, w or W)"
    if program.endswith("awk") and _awk_runs_or_writes(texts[1:]):
        return "the awk program can run a command or write a file (system, a pipe or >)"
    return ""


def _sed_runs_or_writes(args: tuple[str, ...]) -> bool:
    scripts = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
    scripts += [a.partition("=")[2] for a in args if a.startswith("--expression=")]
    if not scripts:  # the script is the first operand; an option's value may come first (`-l 80`)
        scripts = [a for a in args if not a.startswith("-")]
    return any(_sed_script_risky(s) for s in scripts)


def _sed_script_risky(script: str) -> bool:
    """Whether a sed script has an `e`, `w` or `W` command or an `s` flag `e`/`w` (when in doubt: yes)."""
    i, n = 0, len(script)
    while i < n:
        while i < n and script[i] in " \t\n;{}!0123456789,$~+":
            i += 1
        if i < n and script[i] in "/\\":
            delim = script[i + 1] if script[i] == "\\" and i + 1 < n else "/"
            i = _sed_skip(script, i + (2 if script[i] == "\\" else 1), delim)
            continue
        if i >= n:
            return False
        command = script[i]
        if command in "ewW":
            return True
        if command in "sy":
            if i + 1 >= n:
                return True
            delim = script[i + 1]
            i = _sed_skip(script, i + 2, delim)
            i = _sed_skip(script, i, delim)
            flags = re.match(r"[^;\n}]*", script[i:])
            if command == "s" and flags and re.search(r"[ewW]", flags.group(0)):
                return True
            i += flags.end() if flags else 0
            continue
        if command in "aicbtTrRlLvF:#":
            end = script.find("\n", i)
            if command in "aicrRbtTv:#" and end < 0:
                return False
            i = n if end < 0 else end
            continue
        i += 1
    return False


def _sed_skip(script: str, i: int, delim: str) -> int:
    while i < len(script):
        if script[i] == "\\":
            i += 2
        elif script[i] == delim:
            return i + 1
        else:
            i += 1
    return i


def _awk_runs_or_writes(args: tuple[str, ...]) -> bool:
    programs = [a for a in args if not a.startswith("-")]  # an option's value may come first (`-F :`)
    return any(re.search(r"system|\||>|getline|ENVIRON", p) for p in programs)


def git_risk(texts: tuple[str, ...], words: list[Word], sink: Sink) -> str:
    if any(w.glob and w.text[:1] in "*?[{" for w in words[1:]):
        sink.doubt("an unquoted glob in git's arguments could expand to an option")
    i = 1
    while i < len(texts) and texts[i].startswith("-"):
        option = texts[i].partition("=")[0]
        if option in GIT_GLOBAL_RISKS:
            return f"`git {option}` can make git run another program"
        i += 2 if texts[i] in GIT_GLOBAL_WITH_ARG else 1
    if i >= len(texts):
        return ""
    sub, args = texts[i], texts[i + 1 :]
    if sub in GIT_RUNNERS and (not GIT_RUNNERS[sub] or GIT_RUNNERS[sub] in args):
        return f"`git {sub} {GIT_RUNNERS[sub]}`".replace(" `", "`") + " runs a command"
    found = _has_option(args, GIT_RISKS["*"] + GIT_RISKS.get(sub, ()))
    if found:
        return f"`git {sub} {found}` runs another program or writes a file"
    return ""


def find_risk(texts: tuple[str, ...], words: list[Word], sink: Sink) -> str:
    if any(w.glob and w.text[:1] in "*?[{" for w in words[1:]):
        sink.doubt("an unquoted glob in find's arguments could expand to an option such as -delete")
    for word in texts[1:]:
        if word in FIND_WRITES:
            return f"`find {word}` deletes or writes files"
    return ""


def find_exec(words: list[Word]) -> list[list[Word]]:
    """The commands `find … -exec CMD … ;` (or `+`) runs."""
    out: list[list[Word]] = []
    i = 1
    while i < len(words):
        if words[i].text in FIND_EXEC:
            j = i + 1
            while j < len(words) and words[j].text not in (";", "+"):
                j += 1
            if j > i + 1:
                out.append(words[i + 1 : j])
            i = j
        i += 1
    return out


_VALUE_OPTIONS = {"read": "dnNptui", "mapfile": "dnOsuCc", "readarray": "dnOsuCc", "wait": ""}
_ASSIGNING = frozenset({"declare", "typeset", "local", "export", "readonly"})


def names_risk(texts: tuple[str, ...], words: list[Word], sink: Sink) -> str:
    """Builtins that take variable names: a subscript in a name is arithmetic (it can run a command)."""
    program = texts[0]
    if program == "let":
        sink.doubt("`let` evaluates arithmetic, and an array subscript in a value can run a command")
        return ""
    if program in ("mapfile", "readarray") and "-C" in texts:
        sink.doubt(f"`{program} -C` runs a callback this check does not read")
    if program in ("declare", "typeset", "local") and any(
        re.fullmatch(r"[-+][a-zA-Z]*[ni][a-zA-Z]*", t) for t in texts[1:]
    ):
        sink.doubt(f"`{program} -n`/`-i` makes later expansions evaluate a value, which can run a command")
    names: list[str] = []
    i, positional = 1, 0
    while i < len(texts):
        text = texts[i]
        if text.startswith(("-", "+")) and len(text) > 1 and positional == 0:
            if (program, text) in (("read", "-a"), ("wait", "-p")) and i + 1 < len(texts):
                names.append(texts[i + 1])
                i += 2
            else:
                i += 2 if len(text) == 2 and text[1] in _VALUE_OPTIONS.get(program, "") else 1
            continue
        positional += 1
        if program not in ("wait",) and (program != "getopts" or positional == 2):
            names.append(split_assignment(text)[0] if program in _ASSIGNING else text)
        i += 1
    risk = ""
    for name in names:
        base = name.split("[", 1)[0]
        if re.search(r"[$`]", name):
            sink.doubt(
                f"`{program}` takes a name only known when it runs, and a subscript in it can run a command"
            )
        elif not is_name(base) or ("[" in name and not re.fullmatch(r"[^\[]*\[\s*-?[0-9]+\s*\]", name)):
            sink.doubt(f"`{program} {name}` evaluates a subscript as arithmetic, which can run a command")
        if program != "unset" and runs_code(base) and not risk:
            risk = f"`{program} {base}` sets a variable that can make later commands run another program"
    return risk


def printf_risk(texts: tuple[str, ...], words: list[Word], sink: Sink) -> str:
    for i, text in enumerate(texts[:-1]):
        if text == "-v":
            name = texts[i + 1]
            if words[i + 1].dynamic or not _PLAIN.fullmatch(name):
                sink.doubt("`printf -v` with a subscript evaluates it as arithmetic, which can run a command")
            elif runs_code(name):
                return f"`printf -v {name}` sets a variable that can make later commands run another program"
    return ""


def test_risk(texts: tuple[str, ...], words: list[Word], sink: Sink) -> str:
    for i, text in enumerate(texts[:-1]):
        if text == "-v" and (words[i + 1].dynamic or not _PLAIN.fullmatch(texts[i + 1])):
            sink.doubt("`test -v` with a subscript evaluates it as arithmetic, which can run a command")
    return ""


def definition_risk(texts: tuple[str, ...], words: list[Word], sink: Sink) -> str:
    program = texts[0]
    if program == "alias" and any("=" in t for t in texts[1:]):
        return "an alias changes what later commands run"
    if program == "enable" and any(t not in ("-p", "-a", "-n", "-s") for t in texts[1:]):
        return "`enable` can load a builtin from a file"
    if program == "hash" and "-p" in texts[1:]:
        return "`hash -p` makes a name run another program"
    return ""


def cd_risk(texts: tuple[str, ...], words: list[Word], sink: Sink) -> str:
    sink.changes_directory()
    return ""


def trap_risk(texts: tuple[str, ...], words: list[Word], sink: Sink) -> str:
    args = [w for w in words[1:] if w.text not in ("--",)]
    if args and not args[0].text.startswith("-") and len(args) > 1:
        if args[0].dynamic:
            sink.doubt("`trap` sets an action that is only known when it runs")
        sink.script(args[0].text)
    return ""


Handler = Callable[[tuple[str, ...], list[Word], Sink], str]
HANDLERS: dict[str, Handler] = {
    name: (lambda t, w, s, p=name: _options(p, t, w, s)) for name in RISKY_OPTIONS
}
HANDLERS.update(
    {
        "git": git_risk,
        "find": find_risk,
        "printf": printf_risk,
        "test": test_risk,
        "[": test_risk,
        "let": names_risk,
        "alias": definition_risk,
        "enable": definition_risk,
        "hash": definition_risk,
        "cd": cd_risk,
        "pushd": cd_risk,
        "popd": cd_risk,
        "trap": trap_risk,
    }
)
HANDLERS.update({name: names_risk for name in NAME_BUILTINS})
