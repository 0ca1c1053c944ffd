"""agent_cli.tui.screens"""
