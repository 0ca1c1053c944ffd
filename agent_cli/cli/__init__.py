"""The command line and the one composition root (compose.py) that builds every session.

May import: everything.

Entry point: `agent = agent_cli.cli:main` (main.py).
"""

from agent_cli.cli.main import main

__all__ = ["main"]
