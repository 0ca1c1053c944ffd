"""The async loop, the session log, session memory and slash commands."""
