"""Slash-command and `@` path completion, as pure functions of the prompt text.

`/mo` offers `/model`; `/model ` offers the model names; `/permissions a` offers `auto-edit`.
The choices for arguments come from the backend's CommandSpec (`choices`, when it has them) and from
what the TUI itself knows (session ids for `/resume`). `@tuiap` offers the workspace paths the
backend matched (`file_completions`); accepting one puts it in place of the `@` word.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from agent_cli.agent.api import CommandSpec, mention_text

PERMISSION_MODES: tuple[str, ...] = ("ask", "auto-edit", "yolo")


@dataclass(frozen=True)
class Completion:
    value: str  # the whole prompt text after accepting
    label: str  # what the list shows
    help: str = ""
    final: bool = False  # accepting it leaves nothing more to type
    cursor: int | None = None  # where the cursor goes after accepting (None: the end)


def spec_choices(spec: CommandSpec) -> tuple[str, ...]:
    """A spec's argument values, when the backend declares them (`CommandSpec.choices`)."""
    return tuple(str(c) for c in getattr(spec, "choices", ()) or ())


def argument_choices(
    specs: Iterable[CommandSpec], extra: Mapping[str, Sequence[str]] | None = None
) -> dict[str, tuple[str, ...]]:
    """Argument values by command name: the specs' own, then `extra`, then the permission modes."""
    out: dict[str, tuple[str, ...]] = {"permissions": PERMISSION_MODES}
    for spec in specs:
        choices = spec_choices(spec)
        if choices:
            out[spec.name] = choices
    for name, values in (extra or {}).items():
        if values:
            out[name] = tuple(values)
    return out


def complete(
    text: str, specs: Sequence[CommandSpec], choices: Mapping[str, Sequence[str]]
) -> list[Completion]:
    """What can follow `text`. Empty when `text` is not a slash command being typed."""
    if not text.startswith("/") or "\n" in text:
        return []
    head, sep, rest = text[1:].partition(" ")
    if not sep:
        return _complete_name(head, specs)
    name = head.lower()
    if " " in rest:  # past the first argument: nothing to offer
        return []
    values = choices.get(name, ())
    partial = rest.lower()
    matches = [v for v in values if v.lower().startswith(partial)]
    if matches == [rest]:
        return []  # typed in full: nothing left to complete
    # what was typed in full comes first, so Enter takes `gpt-5`, not the `gpt-5-mini` it prefixes
    matches.sort(key=lambda v: v != rest)
    return [Completion(value=f"/{name} {v}", label=v, final=True) for v in matches]


def _complete_name(prefix: str, specs: Sequence[CommandSpec]) -> list[Completion]:
    prefix = prefix.lower()
    out: list[Completion] = []
    for spec in specs:
        if not spec.name.startswith(prefix):
            continue
        if spec.name == prefix and not spec.args:
            continue  # already complete
        takes_args = bool(spec.args)
        value = f"/{spec.name} " if takes_args else f"/{spec.name}"
        label = f"/{spec.name} {spec.args}".rstrip()
        out.append(Completion(value=value, label=label, help=spec.help, final=not _args_required(spec)))
    return out


def _args_required(spec: CommandSpec) -> bool:
    """`<name>` is required; `[focus]` is optional."""
    return spec.args.strip().startswith("<")


def file_completions(text: str, at: int, end: int, paths: Sequence[str]) -> list[Completion]:
    """The `@` word at text[at:end] replaced by each path, written as the mention parser reads it back
    (quoted when it has a space, `#`, a quote, a leading `@`…: `mention_text`); a file is followed by
    a space, a directory is not (completion goes on inside it). A name with a line break is left out."""
    out: list[Completion] = []
    for path in paths:
        word = mention_text(path)
        if not word:
            continue
        word += "" if path.endswith("/") else " "
        rest = text[end:].removeprefix(" ") if not path.endswith("/") else text[end:]
        value = text[:at] + word + rest
        out.append(Completion(value=value, label=path, cursor=at + len(word)))
    return out
