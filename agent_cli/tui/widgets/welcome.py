"""The welcome header: the first entry of the transcript, so it scrolls away with it.

Model, context budget, permission mode, the workspace, whether there is a session to resume, and
the keys worth knowing. It is painted at once (before the model provider has loaded), filled in
when the backend is ready, and follows the model and mode as they change; without a model it says
why (no key: how to set one, or `agent --demo`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from agent_cli.tui.backend_reader import BackendReader
from agent_cli.tui.formatting import format_tokens
from agent_cli.tui.widgets.transcript import HEAD

KEY_HINTS: tuple[tuple[tuple[str, str], ...], ...] = (  # two short lines
    (("Enter", "send"), ("Shift+Enter", "new line"), ("/", "commands"), ("Esc", "interrupt")),
    (("Esc Esc", "rewind"), ("PgUp/PgDn", "scroll"), ("Ctrl+C twice", "quit")),
)


@dataclass(frozen=True)
class WelcomeInfo:
    workspace: str
    model: str = ""  # empty while the provider loads
    budget: int = 0
    permission_mode: str = ""
    resumed_id: str = ""  # this session continues an earlier one
    earlier_sessions: int = 0  # other sessions in this workspace, to /resume
    problem: str = ""  # why there is no model (no key, the provider failed to load), in a few words


def welcome_info(reader: BackendReader, workspace: str, resumed: bool) -> WelcomeInfo:
    status = reader.status()
    current = reader.session_id
    return WelcomeInfo(
        workspace=workspace,
        model=reader.model,
        budget=status.budget if status is not None else 0,
        permission_mode=reader.permission_mode,
        resumed_id=current if resumed else "",
        earlier_sessions=sum(1 for s in reader.sessions() if s.id != current),
    )


def no_model_line(error: str) -> str:
    """The header's few words when there is no model: the error's first sentence and the way on."""
    first = error.strip().splitlines()[0] if error.strip() else "no model available"
    first = first.split(". ")[0].rstrip(".:")
    return f"{first} · see below how to set one up, or run `agent --demo`"


def short_path(path: str | Path, home: Path | None = None) -> str:
    """`~/src/app` for a path under the home directory."""
    text = str(path)
    home_text = str(home if home is not None else Path.home())
    if home_text not in ("", "/") and (text == home_text or text.startswith(home_text + "/")):
        return "~" + text[len(home_text) :]
    return text


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'s' * (count != 1)}"


def welcome_text(info: WelcomeInfo) -> Text:
    text = Text()
    text.append("✻ agent", style="bold")
    text.append("  ·  ")
    if info.model:
        text.append(info.model, style="bold")
        if info.budget:
            text.append(f"  ·  {format_tokens(info.budget)} context budget")
        if info.permission_mode:
            text.append(f"  ·  {info.permission_mode} mode")
    elif info.problem:
        text.append(info.problem, style="bold red")
    else:
        text.append("loading the model provider…", style="italic")
    text.append("\n")
    text.append(short_path(info.workspace), style="dim")
    if info.resumed_id:
        text.append("\n")
        text.append(f"↻ resumed session {info.resumed_id}", style="dim")
    elif info.earlier_sessions:
        text.append("\n")
        text.append(
            f"↻ {plural(info.earlier_sessions, 'earlier session')} here · /resume picks one",
            style="dim",
        )
    for line in KEY_HINTS:
        text.append("\n")
        for i, (key, what) in enumerate(line):
            if i:
                text.append(" · ", style="dim")
            text.append(key, style="bold")
            text.append(f" {what}", style="dim")
    return text


class WelcomeHeader(Static):
    DEFAULT_CSS = """
    WelcomeHeader {
        margin: 1 0 0 0;
        padding: 0 1;
        border: round $primary 50%;
        color: $text;
    }
    """

    def __init__(self, info: WelcomeInfo) -> None:
        self.info = info
        super().__init__(welcome_text(info), classes=HEAD)

    def set_info(self, info: WelcomeInfo) -> None:
        self.info = info
        self.update(welcome_text(info))

    def follow(self, model: str, budget: int, permission_mode: str) -> None:
        """The model, budget or mode changed (/model, Shift+Tab): the header says what holds now."""
        if (model, budget, permission_mode) != (self.info.model, self.info.budget, self.info.permission_mode):
            self.set_info(replace(self.info, model=model, budget=budget, permission_mode=permission_mode))

    @property
    def plain(self) -> str:
        return welcome_text(self.info).plain
