"""Which Textual driver the app runs on: Textual's Linux driver with the fast-paste parser
(paste_driver.py, paste_parser.py) where Textual would use that driver, else Textual's own choice.
Its own module, so the driver (which imports Textual's Linux driver) is imported only where it runs.
"""

from __future__ import annotations

import sys

from textual import constants
from textual.driver import Driver


def paste_driver_class() -> type[Driver] | None:
    """The driver for `App(driver_class=...)`: Textual's Linux driver with the fast-paste parser, or
    None (let Textual choose) where Textual would not use that driver (Windows, `TEXTUAL_DRIVER` set)."""
    if sys.platform == "win32" or constants.DRIVER:
        return None
    from agent_cli.tui.paste_driver import FastPasteDriver

    return FastPasteDriver
