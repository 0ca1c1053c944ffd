"""MCP client (Model Context Protocol) on the official `mcp` SDK: servers from `.mcp.json` and the
config's `[mcp_servers]`, their tools offered through the tool registry as `mcp__<server>__<tool>`.

config.py parses and validates server entries; manager.py runs each server on its own task;
tool.py adapts a server tool to the Tool protocol; search.py offers deferred schemas; runtime.py
ties them to a session. Nothing here imports the SDK at module level: it is heavy.
"""
