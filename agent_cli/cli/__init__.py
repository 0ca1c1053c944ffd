"""The command line: flags and subcommands, `agent -p` and the TUI's launch, thin layers on the
Python API (agent_cli.api), which holds the one composition root.

May import: everything.

Entry point: `agent = agent_cli.cli:main` (main.py).
"""

from agent_cli.cli.main import main

__all__ = ["main"]
