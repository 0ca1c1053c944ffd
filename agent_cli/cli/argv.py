"""argv as typer can take it: `--resume` with no id, the prompt's words wherever they stand, and
Claude Code's `--allowedTools A B C` (a rule list that takes several values) and `--mcp-config A B`."""

from __future__ import annotations

from typing import Any

RULE_OPTIONS = ("--allowed-tools", "--allowedTools", "--disallowed-tools", "--disallowedTools")

PICK = "@pick"


def normalize(argv: list[str], command: Any = None) -> list[str]:
    """argv as typer can take it. `--resume` with no id means: pick one (typer options cannot take
    an optional value). Words that are not options, their values or a subcommand are the prompt, as
    `claude "fix the test"` and `claude -p --output-format json "fix the test"` take it: they become
    one `--prompt=…` (`command` is the click group, for which options take a value)."""
    out = []
    for index, arg in enumerate(argv):
        out.append(arg)
        if arg in ("--resume", "-r"):
            following = argv[index + 1] if index + 1 < len(argv) else None
            if following is None or following.startswith("-"):
                out.append(PICK)
    return out if command is None else _prompt_words(out, command)


def _prompt_words(argv: list[str], command: Any) -> list[str]:
    takes_value = {
        name
        for param in command.params
        if getattr(param, "param_type_name", "") == "option" and not (param.is_flag or param.count)
        for name in (*param.opts, *param.secondary_opts)
    }
    options: list[str] = []
    words: list[str] = []
    printing = False
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            words += argv[index + 1 :]
            break
        if arg.startswith("--print="):  # the old `--print=TASK`
            printing = True
            options.append("--print")
            words.append(arg.split("=", 1)[1])
        elif arg.startswith("-") and arg != "-":
            options.append(arg)
            if arg in takes_value and index + 1 < len(argv):
                index += 1
                options.append(argv[index])
            while arg in RULE_OPTIONS and index + 1 < len(argv) and _is_rule(argv[index + 1]):
                index += 1  # Claude Code's `--allowedTools Read "Bash(git diff:*)"`: one option each
                options += [arg, argv[index]]
            while arg == "--mcp-config" and index + 1 < len(argv) and _is_mcp_config(argv[index + 1]):
                index += 1  # `--mcp-config a.json b.json`, as Claude Code takes it
                options += [arg, argv[index]]
            printing = printing or arg in ("-p", "--print")
        elif not words and not printing and arg in command.commands:
            return argv  # a subcommand: the rest is its own
        else:
            words.append(arg)
        index += 1
    return options + ([f"--prompt={' '.join(words)}"] if words else [])


def _is_rule(text: str) -> bool:
    from agent_cli.tools.rules import is_tool_rule  # only when a rule option is given: 80 ms to import

    return not text.startswith("-") and is_tool_rule(text)


def _is_mcp_config(text: str) -> bool:
    """A further value of `--mcp-config`: a `.json` file's name or a JSON object, not a prompt word."""
    return text.endswith(".json") or text.lstrip().startswith("{")
