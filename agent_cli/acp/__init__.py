"""`agent acp`: the agent as an Agent Client Protocol server over stdio, for editors (Zed, JetBrains,
Neovim's CodeCompanion) and clients such as toad. A thin layer on the Python API: each ACP session is
an `api.Session`; nothing here builds a session part.

`server.py` answers the client's requests (initialize, session/new, session/load, session/prompt,
session/cancel, session/set_mode) on the official SDK (`agent-client-protocol`, import `acp`);
`live.py` is one open session and its turn; `updates.py` turns a turn's `core.events` into session
updates; `history.py` replays a session's conversation to the client; `inputs.py` reads what the
client sends (prompt blocks, MCP servers); `client.py` is what the agent asks of the client (its
`fs` buffers for the file tools, permission questions); `main.py` runs it on stdin/stdout.

May import: core, tools, agent, api, acp.
"""
