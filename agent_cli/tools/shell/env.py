"""Environment assignments in a bash line (`VAR=x cmd`, `export VAR=x`): which are harmless, which
make a program run another program, and which are simply part of the command.

A variable on `SAFE` (locale, colours, log levels) with a plain value is left out when a rule is
matched, as Claude Code does: `LANG=C pytest` is `pytest`. A variable that `runs_code` (it names a
program, a library to preload, options an interpreter reads, where configuration lives) is never
allowed by a prefix or wildcard rule: `GIT_EXTERNAL_DIFF='cmd #' git diff` is not `git diff`. Any
other assignment is part of the command, so `Bash(pytest:*)` does not cover `FOO=1 pytest` (a rule
can say `Bash(FOO=1 pytest:*)`).
"""

from __future__ import annotations

import re

SAFE = frozenset(
    {
        "LANG",
        "LANGUAGE",
        "LC_ALL",
        "LC_CTYPE",
        "LC_COLLATE",
        "LC_MESSAGES",
        "LC_NUMERIC",
        "LC_TIME",
        "TZ",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLUMNS",
        "LINES",
        "CI",
        "RUST_BACKTRACE",
        "RUST_LOG",
        "NODE_ENV",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
        "GOOS",
        "GOARCH",
        "CGO_ENABLED",
    }
)

# Names, exact, of variables that make a program load or run something else, or read its
# configuration from somewhere else.
_RUNS_CODE = frozenset(
    {
        "PATH",
        "IFS",
        "HOME",
        "SHELL",
        "ENV",
        "BASH_ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS1",
        "PS2",
        "PS4",
        "PROMPT_COMMAND",
        "CDPATH",
        "GLOBIGNORE",
        "ZDOTDIR",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "TERMINAL",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONWARNINGS",
        "PYTHONBREAKPOINT",
        "PYTHONSAFEPATH",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "PERL5DB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "LESSOPEN",
        "LESSCLOSE",
        "LESSKEY",
        "MANOPT",
        "MAKEFLAGS",
        "MFLAGS",
        "GNUMAKEFLAGS",
        "CC",
        "CXX",
        "CPP",
        "LD",
        "AR",
        "RUSTC",
        "RUSTDOC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "GOFLAGS",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "TAR_OPTIONS",
        "GREP_OPTIONS",
        "GZIP",
        "XZ_OPT",
        "ZSTD_CLEVEL",
        "TMUX",
        "TERMINFO",
        "TERMINFO_DIRS",
        "LUA_INIT",
        "TCLLIBPATH",
        "R_PROFILE",
        "R_PROFILE_USER",
        "PHPRC",
        "BUNDLE_GEMFILE",
        "GNUPGHOME",
    }
)
# Families: GIT_* (GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND, GIT_CONFIG_*…), the dynamic linker, bash's
# exported functions, npm/cargo/pip configuration, and every *_COMMAND, *PAGER, *EDITOR, *_OPTIONS,
# *_OPTS, *ASKPASS, *PATH, *_HOME, *_CONFIG* and *WRAPPER variable.
_RUNS_CODE_PATTERN = re.compile(
    r"^(GIT_|LD_|DYLD_|BASH_FUNC_|NPM_CONFIG_|CARGO_|PIP_|UV_|POETRY_|XDG_|DOCKER_|KUBE|SSH_|SUDO_|PKG_CONFIG)"
    r"|(_COMMAND|_CMD|PAGER|EDITOR|_OPTIONS|_OPTS|ASKPASS|PATH|_HOME|WRAPPER|_SHELL|_EXEC|_PROGRAM)$"
    r"|_CONFIG",
    re.IGNORECASE,
)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def split_assignment(text: str) -> tuple[str, str]:
    """`NAME=value` (or `NAME+=value`, `NAME[i]=value`) -> (NAME as written, value)."""
    name, _, value = text.partition("=")
    return name.removesuffix("+"), value


def runs_code(name: str) -> bool:
    """Whether setting this variable can make a program run another one (or read other config)."""
    base = name.split("[", 1)[0]
    return base in _RUNS_CODE or bool(_RUNS_CODE_PATTERN.search(base))


def is_safe(assignment: str) -> bool:
    """A harmless assignment a rule may ignore: a variable on `SAFE` with a plain value."""
    name, value = split_assignment(assignment)
    return name in SAFE and not re.search(r"[$`\\]", value)


def is_name(text: str) -> bool:
    return bool(_NAME.match(text))
