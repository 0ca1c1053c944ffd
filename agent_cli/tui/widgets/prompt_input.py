"""The prompt: multi-line input with history, slash-command and `@` path completion.

Enter sends; Shift+Enter or Ctrl+J inserts a newline. Up on the first line and Down on the last line
walk the history. Typing `/` opens a small list of commands above the input (and, after a command
and a space, its argument values); typing `@` asks the app for the workspace's paths that match
what follows it. Tab or Enter accepts, Up/Down move, Esc closes. Tab never moves the focus away:
with nothing to complete it does nothing. Above the input, the mention bar shows what the prompt's
`@` mentions will attach and their token cost (the app fills it in).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import OptionList, Static, TextArea
from textual.widgets.option_list import Option

from agent_cli.agent.api import CommandSpec, MentionInfo, find_mentions, mention_at
from agent_cli.tui.completion import Completion, complete, file_completions
from agent_cli.tui.history import PromptHistory
from agent_cli.tui.history_file import HistoryFile
from agent_cli.tui.inline_bindings import run_own_binding
from agent_cli.tui.paste import PasteStore, wants_chip
from agent_cli.tui.widgets.mention_bar import MentionBar

NEWLINE_KEYS = frozenset({"shift+enter", "ctrl+j", "newline", "alt+enter"})
PLACEHOLDER = "Ask anything · / for commands · Shift+Enter or Ctrl+J for a new line"


class CompletionList(OptionList, can_focus=False):
    DEFAULT_CSS = """
    CompletionList {
        height: auto;
        max-height: 8;
        border: none;
        padding: 0 1;
        background: $surface;
        display: none;
    }
    CompletionList.-shown { display: block; }
    """


class PromptTextArea(TextArea):
    BINDINGS = [
        Binding("tab", "accept_completion", "accept", show=False),
        Binding("escape", "dismiss_completion", "close", show=False),
    ]

    def __init__(self, owner: PromptInput, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._owner = owner

    async def _on_paste(self, event: events.Paste) -> None:
        if self.read_only or not wants_chip(event.text):
            return  # Textual calls TextArea's own handler next (it walks the class hierarchy)
        event.stop()
        event.prevent_default()
        chip = self._owner.pastes.add(event.text)  # megabytes never enter the TextArea
        if result := self._replace_via_keyboard(chip, *self.selection):
            self.move_cursor(result.end_location)
            self.focus()

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self._owner.enter_pressed()
        elif event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            start, end = self.selection
            self.replace("\n", start, end, maintain_selection_offset=False)
        else:  # Backspace, arrows, Ctrl+W…: now, not after the characters typed after them
            await run_own_binding(self, event)

    def action_delete_left(self) -> None:
        if not self._delete_chip(left=True):
            super().action_delete_left()

    def action_delete_right(self) -> None:
        if not self._delete_chip(left=False):
            super().action_delete_right()

    def _delete_chip(self, *, left: bool) -> bool:
        """Backspace or Delete into a paste chip removes the whole chip (and so the paste)."""
        if self.read_only or not self.selection.is_empty:
            return False
        row, column = self.cursor_location
        span = self._owner.pastes.chip_at(self.document.get_line(row), column, left=left)
        if span is None:
            return False
        self._delete_via_keyboard((row, span[0]), (row, span[1]))
        return True

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self._owner.move_completion(-1):
            return
        if not select and self.cursor_at_first_line and self._owner.history_previous():
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if not select and self._owner.move_completion(1):
            return
        if not select and self.cursor_at_last_line and self._owner.history_next():
            return
        super().action_cursor_down(select)

    def action_accept_completion(self) -> None:
        """Tab: accept the completion shown; with none, nothing (the focus stays here)."""
        self._owner.accept_completion()

    def action_dismiss_completion(self) -> None:
        if not self._owner.hide_completions():
            raise SkipAction()


class PromptInput(Vertical):
    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        padding: 0;
    }
    PromptInput > #prompt-row {
        height: auto;
        border-top: solid $primary 40%;
    }
    PromptInput:focus-within > #prompt-row { border-top: solid $primary; }
    PromptInput #prompt-mark { width: 2; height: 1; padding: 0 0 0 1; color: $text-primary; }
    PromptInput PromptTextArea {
        width: 1fr;
        height: auto;
        min-height: 1;
        max-height: 12;
        padding: 0 1 0 0;
        background: $background;
    }
    """

    class Edited(Message):
        """The text changed (typing): a question that pops up now must not take the next keys."""

    class FilesWanted(Message):
        """An `@` word is being typed: the app asks the backend for paths matching `query`."""

        def __init__(self, query: str) -> None:
            super().__init__()
            self.query = query

    class MentionsChanged(Message):
        """The prompt's mentions changed: the app asks what they cost (`show_mentions`)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Submitted(Message):
        """The person pressed Enter on a non-empty prompt: `text` is what to send (pastes in full),
        `display` what the prompt showed (pastes as chips)."""

        def __init__(self, text: str, display: str | None = None) -> None:
            super().__init__()
            self.text = text
            self.display = display if display is not None else text

    def __init__(
        self, *, history: Iterable[str] = (), history_file: HistoryFile | None = None, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.history = PromptHistory(history, store=history_file)
        self.pastes = PasteStore()
        self.completions: list[Completion] = []
        self._specs: list[CommandSpec] = []
        self._choices: dict[str, tuple[str, ...]] = {}
        self._quiet_text: str | None = None  # a history entry being shown: no completion list for it
        self._completed_for = ""  # the text `completions` were computed for
        self._completion_list = CompletionList(id="completions", markup=False)
        self._file_query: tuple[int, int, str] | None = None  # the `@` word typed: start, end, query
        self._mentions: tuple[str, ...] = ()  # the mentions the bar was last asked about
        self.mention_bar = MentionBar(id="mentions")
        self.text_area = PromptTextArea(
            self,
            id="prompt-text",
            soft_wrap=True,
            tab_behavior="focus",
            placeholder=PLACEHOLDER,
            compact=True,
            highlight_cursor_line=False,
        )

    def on_mount(self) -> None:
        self._say_history_problem()

    def _say_history_problem(self) -> None:
        if self.history.store is not None and (problem := self.history.store.take_problem()):
            self.notify(problem, title="prompt history", severity="warning")

    def compose(self) -> ComposeResult:
        yield self._completion_list
        yield self.mention_bar
        with Horizontal(id="prompt-row"):
            yield Static("›", id="prompt-mark")
            yield self.text_area

    # -- configuration (called by the app) ---------------------------------------------------------
    def set_commands(self, specs: Sequence[CommandSpec], choices: Mapping[str, Sequence[str]]) -> None:
        self._specs = list(specs)
        self._choices = {name: tuple(values) for name, values in choices.items()}
        self._refresh_completions()

    @property
    def text(self) -> str:
        return self.text_area.text

    def set_text(self, text: str) -> None:
        """Replace the text, cursor at the end."""
        self.text_area.load_text(text)
        self.text_area.move_cursor(self.text_area.document.end)

    def focus_input(self) -> None:
        self.text_area.focus()

    def type_through(self, key: str, character: str | None) -> None:
        """A key a modal passed on because it belonged to typing in progress."""
        if key == "backspace":
            self.text_area.action_delete_left()
        elif character and character.isprintable():
            self.text_area.insert(character)

    # -- completion --------------------------------------------------------------------------------
    @property
    def completions_shown(self) -> bool:
        return bool(self.completions)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self.post_message(self.Edited())
        if self._quiet_text is not None and self.text == self._quiet_text:
            self.hide_completions()
            return
        self._quiet_text = None
        self._refresh_completions()
        self._mentions_changed()

    def _mentions_changed(self) -> None:
        settled = self._settled()
        mentions = _mention_texts(settled)
        if mentions != self._mentions:
            self._mentions = mentions
            if mentions:
                self.post_message(self.MentionsChanged(settled))
            else:
                self.mention_bar.show(())

    def _settled(self) -> str:
        """The text without the `@` word still being typed (it names no file yet: no warning for it)."""
        text = self.text
        cursor = self._cursor()
        typing = mention_at(text, cursor)
        return text if typing is None else text[: typing[0]] + text[cursor:]

    def show_mentions(self, text: str, infos: Sequence[MentionInfo]) -> None:
        """What the mentions of `text` attach (ignored when the prompt has moved on)."""
        if _mention_texts(self._settled()) == _mention_texts(text):
            self.mention_bar.show(infos)

    def _cursor(self) -> int:
        return self.text_area.document.get_index_from_location(self.text_area.cursor_location)

    def _refresh_completions(self) -> None:
        self._completed_for = self.text
        self.completions = complete(self.text, self._specs, self._choices) if self._specs else []
        self._show(self.completions)
        if not self.completions and not self.text.startswith("/"):
            self._ask_files()

    def _ask_files(self) -> None:
        cursor = self._cursor()
        found = mention_at(self.text, cursor)
        if found is None:
            self._file_query = None
            return
        at, query = found
        if self._file_query != (at, cursor, query):
            self._file_query = (at, cursor, query)
            self.post_message(self.FilesWanted(query))

    def show_file_completions(self, query: str, paths: Sequence[str]) -> None:
        """The app's answer to FilesWanted (ignored when the `@` word has changed since)."""
        if self._file_query is None or self._file_query[2] != query or self._completed_for != self.text:
            return
        at, end, _ = self._file_query
        self._show(file_completions(self.text, at, end, paths))

    def _show(self, completions: list[Completion]) -> None:
        self.completions = completions
        options = self._completion_list
        options.clear_options()
        for item in completions:
            label = Text(item.label, style="bold")
            if item.help:
                label.append(f"  {item.help}", style="dim")
            options.add_option(Option(label))
        if completions:
            options.highlighted = 0
        options.set_class(bool(completions), "-shown")

    def move_completion(self, delta: int) -> bool:
        if not self.completions:
            return False
        current = self._completion_list.highlighted or 0
        self._completion_list.highlighted = (current + delta) % len(self.completions)
        return True

    def accept_completion(self) -> bool:
        """Put the highlighted completion in the input. False when none is shown."""
        chosen = self._highlighted()
        if chosen is None:
            return False
        self._accept(chosen)
        return True

    def _accept(self, chosen: Completion) -> None:
        self.set_text(chosen.value)
        if chosen.cursor is not None:
            self.text_area.move_cursor(self.text_area.document.get_location_from_index(chosen.cursor))

    def hide_completions(self) -> bool:
        if not self.completions:
            return False
        self.completions = []
        self._completion_list.clear_options()
        self._completion_list.set_class(False, "-shown")
        return True

    def _highlighted(self) -> Completion | None:
        if self._completed_for != self.text and self.text != self._quiet_text:
            self._refresh_completions()  # typed faster than the list followed: never accept a stale one
        if self.completions and self.completions[0].cursor is not None and self._file_query is None:
            return None  # `@` paths for a word no longer being typed
        if not self.completions:
            return None
        index = self._completion_list.highlighted or 0
        return self.completions[min(index, len(self.completions) - 1)]

    # -- history -----------------------------------------------------------------------------------
    def history_previous(self) -> bool:
        text = self.history.previous(self.text)
        if text is None:
            return False
        self._show_history(text)
        return True

    def history_next(self) -> bool:
        text = self.history.next()
        if text is None:
            return False
        self._show_history(text)
        return True

    def _show_history(self, text: str) -> None:
        self._quiet_text = text
        self.set_text(text)
        self.hide_completions()

    def clear_draft(self) -> bool:
        """Empty the prompt, keeping what it held in the history (Up brings it back); False when empty."""
        text = self.text
        if not text.strip():
            return False
        self.history.add(text)
        self.text_area.clear()
        self.hide_completions()
        return True

    # -- submitting --------------------------------------------------------------------------------
    def enter_pressed(self) -> None:
        chosen = self._highlighted()
        if chosen is not None:
            self._accept(chosen)
            if not chosen.final:
                return
        self.submit()

    def submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        full = self.pastes.prompt(text)
        # with its chips: recalled with Up, it still expands; kept for later sessions only without
        self.history.add(text, keep=full == text)
        self._say_history_problem()
        self.text_area.clear()
        self.hide_completions()
        self.post_message(self.Submitted(full, text))


def _mention_texts(text: str) -> tuple[str, ...]:
    return tuple(m.text for m in find_mentions(text)) if "@" in text or "/" in text else ()
