"""Commands that run another command: the wrapped command is a command the rules must allow too.

- `timeout`, `nice`, `nohup`, `stdbuf`, `command`, `builtin`, `exec`, `env`, `xargs`, `ionice`,
  `setsid`, `flock`, and `bash`/`sh`/`dash -c SCRIPT`, `eval ARGS`: these only run what they wrap, so
  `timeout 60 pytest` needs `Bash(pytest:*)` and nothing for `timeout` (as in Claude Code). `env`'s
  `NAME=value` arguments are the wrapped command's assignments.
- `sudo`, `doas`, `su -c`, `runuser`, `chroot`, `watch`, `strace`, `valgrind`, `fakeroot`, `trap`,
  `find -exec`/`-execdir`/`-ok`: the command itself needs a rule, and so does what it runs: `Bash(find:*)`
  does not allow `find . -exec rm {} \\;` unless `rm {}` is allowed too; `Bash(sudo:*)` does not
  allow `sudo rm`.
- `zsh`/`ksh`/`fish`… `-c`: their syntax is not bash's, so their script is a doubt.

A wrapper with an option this module does not know is a doubt: where the wrapped command starts is
then not certain. So is an unquoted glob among its options (a file named `-delete` is an option).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agent_cli.tools.shell.env import is_name, runs_code, split_assignment
from agent_cli.tools.shell.model import SimpleCommand, Sink, Word
from agent_cli.tools.shell.programs import HANDLERS, find_exec


@dataclass(frozen=True)
class _Spec:
    with_arg: frozenset[str] = frozenset()  # options that take a value (the next word, `=v` or attached)
    flags: frozenset[str] = frozenset()
    query: frozenset[str] = frozenset()  # options after which nothing is run (`command -v`)
    positional: int = 0  # words between the options and the command (timeout's duration, chroot's dir)
    transparent: bool = True  # it only runs what it wraps
    chdir: frozenset[str] = frozenset()  # options that change the directory


def _spec(with_arg: str = "", flags: str = "", query: str = "", **more: object) -> _Spec:
    chdir = frozenset(str(more.pop("chdir", "")).split())
    return _Spec(
        frozenset(with_arg.split()), frozenset(flags.split()), frozenset(query.split()), chdir=chdir, **more
    )  # type: ignore[arg-type]


# fmt: off
SPECS: dict[str, _Spec] = {
    "timeout": _spec("-k --kill-after -s --signal", "--preserve-status --foreground -v --verbose", positional=1),
    "nice": _spec("-n --adjustment"),
    "nohup": _spec(),
    "stdbuf": _spec("-i -o -e --input --output --error"),
    "command": _spec(flags="-p", query="-v -V"),
    "builtin": _spec(),
    "exec": _spec("-a", "-c -l"),
    "env": _spec("-u --unset -C --chdir", "-i --ignore-environment -0 --null -v --debug -", chdir="-C --chdir"),
    "xargs": _spec(
        "-a --arg-file -d --delimiter -E -L -n --max-args -P --max-procs -s --max-chars --process-slot-var -I",
        "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit -i -l -e"
        " --replace --max-lines --eof",
    ),
    "ionice": _spec("-c --class -n --classdata", "-t --ignore", "-p -P -u --pid --pgid --uid"),
    "setsid": _spec(flags="-c --ctty -f --fork -w --wait"),
    "flock": _spec(
        "-E --conflict-exit-code -w --timeout --wait",
        "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close -F --no-fork --verbose",
        positional=1,
    ),
    "sudo": _spec(
        "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role -t --type -U --other-user"
        " -T --command-timeout -R --chroot",
        "-E --preserve-env -H --set-home -n --non-interactive -S --stdin -b --background -k --reset-timestamp"
        " -P --preserve-groups -A --askpass -B --bell -N --no-update -i --login -s --shell",
        "-l --list -v --validate -e --edit -V --version -K --remove-timestamp",
        transparent=False, chdir="-D --chdir",
    ),
    "doas": _spec("-u -C", "-n", "-s -L", transparent=False),
    "chroot": _spec("--userspec --groups", "--skip-chdir", positional=1, transparent=False),
    "strace": _spec(
        "-o -e -p -s -u -E -P -a -b -I -S -O -X --output --trace",
        "-f -ff -c -C -t -tt -ttt -T -v -x -xx -y -yy -q -qq -r -w -z -Z -k -n",
        transparent=False,
    ),
    "fakeroot": _spec("-l --lib --faked -s -i", "-u --unknown-is-real", transparent=False),
    "valgrind": _spec(transparent=False),
    "watch": _spec(
        "-n --interval -q --equexit",
        "-b --beep -c --color -C --no-color -d --differences -e --errexit -g --chgexit -p --precise -r --no-rerun"
        " -t --no-title -w --no-wrap -x --exec",
        transparent=False,
    ),
}
# fmt: on
SHELLS = frozenset({"bash", "sh", "dash", "rbash"})
OTHER_SHELLS = frozenset(
    {"zsh", "ksh", "mksh", "pdksh", "yash", "fish", "csh", "tcsh", "busybox", "toybox", "ash"}
)
_RUNNERS = SHELLS | OTHER_SHELLS | {"eval", "su", "runuser"}
_SHELL_ARG_OPTIONS = frozenset({"-o", "+o", "-O", "+O"})
_SHELL_LONG = frozenset(
    {"--login", "--noprofile", "--norc", "--posix", "--noediting", "--restricted", "--verbose"}
)


def meaning(assigns: list[Word], words: list[Word], sink: Sink, depth: int = 0) -> None:
    """The commands a simple command runs, into `sink`: itself, and what it wraps."""
    risk = _assignment_risk(assigns, sink)
    texts = tuple(w.text for w in words)
    names = tuple(a.text for a in assigns)
    if not words:
        for assign in assigns:
            name = split_assignment(assign.text)[0]
            if runs_code(name):
                reason = f"it sets {name}, which can make a later command run another program"
                sink.command(SimpleCommand((), (assign.text,), reason))
        return
    head = words[0]
    if head.dynamic or head.glob:
        reason = f"its command name `{head.text}` is only known when it runs"
        sink.command(SimpleCommand(texts, names, reason))
        sink.doubt(reason)
        return
    if depth > 8:
        sink.doubt("wrappers nested too deep to follow")
        return
    program = head.text.rsplit("/", 1)[-1]
    if program in SPECS:
        _wrapped(program, SPECS[program], assigns, words, risk, sink, depth)
    elif program in SHELLS or program in OTHER_SHELLS:
        _shell(program, assigns, words, risk, sink)
    elif program == "eval":
        if any(w.dynamic for w in words[1:]):
            sink.doubt("`eval` of an expansion runs a command that is only known when it runs")
        sink.command(SimpleCommand(texts, names, risk, wrapper=len(words) > 1))
        sink.script(" ".join(texts[1:]))
    elif program in ("su", "runuser"):
        _su(assigns, words, risk, sink, depth)
    else:
        handler: Callable[[tuple[str, ...], list[Word], Sink], str] | None = HANDLERS.get(program)
        own = handler(texts, words, sink) if handler else ""
        sink.command(SimpleCommand(texts, names, risk or own))
        if program == "find":
            for inner in find_exec(words):
                meaning([], inner, sink, depth + 1)


def _assignment_risk(assigns: list[Word], sink: Sink) -> str:
    risk = ""
    for assign in assigns:
        name = split_assignment(assign.text)[0]
        base, _, subscript = name.partition("[")
        if subscript and not re.fullmatch(r"\s*-?[0-9]+\s*\]", subscript):
            sink.doubt(f"`{name}` evaluates a subscript as arithmetic, which can run a command")
        if not is_name(base):
            sink.doubt(f"`{assign.text}` is not an assignment this check can read")
        if runs_code(name) and not risk:
            risk = f"it sets {base}, which can make a program run another program"
    return risk


def _options(program: str, spec: _Spec, words: list[Word], sink: Sink) -> tuple[int, bool, bool]:
    """Where the wrapped command starts, whether an option says nothing runs, whether it chdirs."""
    i, chdir = 1, False
    while i < len(words):
        word = words[i].text
        if words[i].glob and word[:1] in "*?[{":
            sink.doubt(f"an unquoted glob among `{program}`'s options could expand to an option")
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-" and "-" not in spec.flags:
            break
        if word == "-":
            i += 1
            continue
        name, eq, _ = word.partition("=")
        if word.startswith("--"):
            if name in spec.query:
                return i, True, chdir
            if name not in spec.with_arg | spec.flags:
                sink.doubt(f"`{program} {word}` is an option this check does not know")
                return len(words), True, chdir
            chdir = chdir or name in spec.chdir
            i += 1 if eq or name in spec.flags else 2
            continue
        if program == "nice" and re.fullmatch(r"-\d+", word):
            i += 1
            continue
        step = 1
        for k, letter in enumerate(word[1:], start=1):
            option = "-" + letter
            if option in spec.query:
                return i, True, chdir
            if option in spec.flags or (program == "xargs" and option in ("-i", "-l", "-e")):
                if program == "xargs" and option in ("-i", "-l", "-e"):
                    break  # their value is attached, if any
                continue
            if option in spec.with_arg:
                chdir = chdir or option in spec.chdir
                step = 1 if k < len(word) - 1 else 2
                break
            sink.doubt(f"`{program} {word}` is an option this check does not know")
            return len(words), True, chdir
        i += step
    return i + spec.positional, False, chdir


def _wrapped(
    program: str, spec: _Spec, assigns: list[Word], words: list[Word], risk: str, sink: Sink, depth: int
) -> None:
    texts = tuple(w.text for w in words)
    names = tuple(a.text for a in assigns)
    start, nothing_runs, chdir = _options(program, spec, words, sink)
    inner_assigns = list(assigns)
    if program == "env":
        while (
            start < len(words)
            and "=" in words[start].text
            and is_name(split_assignment(words[start].text)[0])
        ):
            inner_assigns.append(words[start])
            start += 1
        if any(w.text.startswith(("-S", "--split-string")) for w in words[1:start]):
            sink.doubt("`env -S` splits a string into a command this check does not read")
    if chdir:
        sink.changes_directory()
    inner = words[start:]
    if nothing_runs or not inner:
        sink.command(SimpleCommand(texts, names, risk))
        return
    if program == "flock" and inner[0].text in ("-c", "--command"):
        sink.command(SimpleCommand(texts, names, risk, wrapper=len(inner) > 1))
        if len(inner) > 1:
            if inner[1].dynamic:
                sink.doubt("`flock -c` runs a script that is only known when it runs")
            sink.script(inner[1].text)
        return
    if program == "watch" and not any(w.text in ("-x", "--exec") for w in words[1:start]):
        sink.command(SimpleCommand(texts, names, risk, wrapper=False))
        sink.script(" ".join(w.text for w in inner))
        return
    transparent = spec.transparent
    inner_program = inner[0].text.rsplit("/", 1)[-1]
    if program == "xargs" and (
        inner_program in SPECS or inner_program in HANDLERS or inner_program in _RUNNERS
    ):
        # the arguments xargs reads from its input could be options or a command for this program
        risk = (
            risk
            or f"`xargs {inner_program}` adds arguments read from its input, which {inner_program} reads as options"
        )
        transparent = False
    sink.command(SimpleCommand(texts, names, risk or _assignment_risk(inner_assigns, sink), transparent))
    meaning(inner_assigns, inner, sink, depth + 1)
    if program == "sudo" and any(_is_shell_option(w.text) for w in words[1:start]):
        sink.script(" ".join(w.text for w in inner))  # `sudo -s CMD…` runs them as a shell line


def _is_shell_option(word: str) -> bool:
    return word in ("--shell", "--login") or (
        word.startswith("-") and not word.startswith("--") and bool(set(word[1:]) & {"s", "i"})
    )


def _shell(program: str, assigns: list[Word], words: list[Word], risk: str, sink: Sink) -> None:
    """`bash -c SCRIPT`: the script is read as a line of its own."""
    texts = tuple(w.text for w in words)
    names = tuple(a.text for a in assigns)
    script: Word | None = None
    command_mode = False
    i = 1
    while i < len(words):
        word = words[i].text
        if word in ("--", "-"):
            i += 1
            break
        if word in _SHELL_ARG_OPTIONS:
            i += 2
            continue
        if word.startswith("--"):
            if word not in _SHELL_LONG:
                sink.doubt(f"`{program} {word}` is an option this check does not know")
            i += 1
            continue
        if not word.startswith(("-", "+")):
            break
        command_mode = command_mode or "c" in word[1:]
        if "o" in word[1:] or "O" in word[1:]:
            i += 1  # `-eo pipefail`: the option's value follows
        i += 1
    if command_mode and i < len(words):
        script = words[i]
    if script is None:
        sink.command(SimpleCommand(texts, names, risk))  # runs a file or its input: a rule must name it
        return
    if program in OTHER_SHELLS:
        sink.doubt(f"`{program} -c` runs a script in a syntax that is not bash's; it cannot be checked")
    if script.dynamic:
        sink.doubt(f"`{program} -c` runs a script that is only known when it runs")
    sink.command(SimpleCommand(texts, names, risk, wrapper=program in SHELLS))
    sink.script(script.text)


def _su(assigns: list[Word], words: list[Word], risk: str, sink: Sink, depth: int) -> None:
    texts = tuple(w.text for w in words)
    sink.command(SimpleCommand(texts, tuple(a.text for a in assigns), risk))
    for i, word in enumerate(words):
        value = None
        if word.text in ("-c", "--command") and i + 1 < len(words):
            value = words[i + 1]
        elif word.text.startswith("--command="):
            value = Word(word.text.partition("=")[2], word.dynamic)
        if value is not None:
            if value.dynamic:
                sink.doubt("`su -c` runs a script that is only known when it runs")
            sink.script(value.text)
            return
        if word.text in ("-s", "--shell") or word.text.startswith("--shell="):
            sink.doubt("`su --shell` runs a program this check does not read")
    if words[0].text.endswith("runuser") and "--" in texts:
        meaning([], words[texts.index("--") + 1 :], sink, depth + 1)
