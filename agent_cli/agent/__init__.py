"""The turn: the loop, tool calls, the session object (AgentSession), slash commands,
the memory note and its schedule, side requests, sub-agents.

May import: core, context, llm, tools, session, settings, extensions, agent.
"""
