"""agent_cli.tui.widgets"""
