"""Skills: folders with a `SKILL.md` (YAML frontmatter, then instructions), in the places and format
Claude Code, Codex and others read them.

catalog.py finds and parses them (the person's own folders, and the workspace's only when it is
trusted); listing.py writes the names and descriptions the system prompt carries, capped; tool.py is
the `skill` tool that loads a body on demand and `skill_search` for what the cap left out, and the
turn-scoped `allowed-tools` grants; command.py makes each skill a `/name` command and renders
`/skills`.

May import: core, context, llm, tools, settings, extensions.
"""
