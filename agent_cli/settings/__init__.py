"""What the person configured and whether the workspace is trusted: config layers, settings files,
permission sources and the /permissions command, trust.

May import: core, context, llm, tools, settings.
"""
