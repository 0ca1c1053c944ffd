"""agent_cli.replay"""
