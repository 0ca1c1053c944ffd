"""The Textual front end: the app, widgets, screens; it talks to a session only through agent.api.

May import: core, agent, tui.
"""
