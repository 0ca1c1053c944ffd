"""What plugs into a session from outside the core: MCP servers, hooks, custom slash commands, agent
definition files, and loading them for a session.

May import: core, context, llm, tools, settings, extensions.
"""
