"""Textual's Linux/macOS driver, reading input with `FastPasteParser`.

`LinuxDriver.run_input_thread` builds its `XTermParser` inside the loop, so the loop is repeated here
as it is in Textual 8.2 with the one change: the parser. Import it through `paste_driver_class()`
(agent_cli/tui/driver.py), which only picks it where Textual would pick `LinuxDriver`.
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder

from textual._loop import loop_last
from textual._parser import ParseError
from textual.drivers.linux_driver import LinuxDriver

from agent_cli.tui.paste_parser import FastPasteParser


class FastPasteDriver(LinuxDriver):
    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual's loop, with the fast-paste parser)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno = self.fileno
        event_read = selectors.EVENT_READ
        parser = FastPasteParser(self._debug)
        feed = parser.feed
        tick = parser.tick
        decode = getincrementaldecoder("utf-8")().decode
        read = os.read

        def process_selector_events(
            selector_events: list[tuple[selectors.SelectorKey, int]], final: bool = False
        ) -> None:
            for last, (_selector_key, mask) in loop_last(selector_events):
                if mask & event_read:
                    unicode_data = decode(read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:
                        break  # This can occur if the stdin is piped
                    for event in feed(unicode_data):
                        self.process_message(event)
            for event in tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(0.1))
            selector.unregister(self.fileno)
            process_selector_events(selector.select(0.1), final=True)
        finally:
            selector.close()
            try:
                for _event in feed(""):
                    pass
            except (EOFError, ParseError):
                pass
