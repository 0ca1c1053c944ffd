"""agent_cli.tui"""
