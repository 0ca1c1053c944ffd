"""`python -m agent_cli.cli`: the same as the `agent` command."""

from agent_cli.cli.main import main

main()
