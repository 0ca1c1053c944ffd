"""The command line (see main.py): `agent = agent_cli.cli:main`."""

from agent_cli.cli.main import main

__all__ = ["main"]
