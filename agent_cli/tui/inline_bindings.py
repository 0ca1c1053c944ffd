"""A text widget's own key bindings, run in order with the characters typed around them.

Textual inserts a printable key in the focused widget's `_on_key`, but runs a bound key (Backspace,
Left/Right, Home/End, Ctrl+W, Ctrl+K, Up/Down…) only once its event has bubbled up to the screen,
which looks the binding up then. Keys that arrive in one burst (one read of the terminal: a fast
typist, a macro or chording keyboard, a slow moment of the app) are applied out of order: `abc`
Backspace `d` gave `abc`, `hello world` Ctrl+W `there` gave `hello ` (Textual issue #6605).

`run_own_binding` runs the widget's own binding for the key at once, as the screen would have: the
priority bindings (the app's Esc, Ctrl+C…) were tried before the widget got the key, and among the
others the focused widget's own come first. An action that declines (SkipAction, or disabled by
`check_action`) leaves the key to go on up as before.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget


async def run_own_binding(widget: Widget, event: events.Key) -> bool:
    """Run `widget`'s non-priority binding of `event.key` now; True (the event stopped) if one ran."""
    for binding in widget._bindings.key_to_bindings.get(event.key, ()):
        if not binding.priority and await widget.app.run_action(binding.action, widget):
            event.stop()
            event.prevent_default()
            return True
    return False
