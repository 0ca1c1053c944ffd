"""The TUI tests import their helpers (fake_backend, tui_helpers) from this directory."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
