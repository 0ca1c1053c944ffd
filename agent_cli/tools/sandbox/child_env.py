"""The environment of what the agent starts on behalf of the model or the workspace: bash, hooks and
MCP servers get the person's environment minus the agent's own credentials and, unless the person
lets one through on purpose, every variable whose name looks like a secret (as Codex's
`shell_environment_policy` does by default). A command the model chose, or a hook or server a
repository brought, has no business with the key the agent talks to its provider with, nor with
the person's GitHub or cloud tokens.

Below the environment come the variables of the person's own `~/.claude/settings.json` `env`
(`defaults`, settings/claude_user.py), under the same filter.

The person lets one through with `[sandbox] env_passthrough = ["NAME", "AWS_*"]` in their own
config (names or fnmatch patterns; a workspace's config cannot set it), and an MCP server entry in
their own config passes whatever its `env` table names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

# The agent's own keys: never handed on unless the person names them in env_passthrough.
AGENT_CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY")

# Names that look like secrets, matched case-insensitively (GITHUB_TOKEN, GH_TOKEN, NPM_TOKEN,
# AWS_SECRET_ACCESS_KEY, MY_PASSWORD, GOOGLE_APPLICATION_CREDENTIALS, ...).
SECRET_PATTERNS = (
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*_PAT",
    "*_AUTH",
    "AWS_*",
)


@dataclass(frozen=True)
class ChildEnv:
    """Which variables a child process gets. The default withholds the agent's keys and every
    secret-looking name, and lets nothing through on purpose."""

    passthrough: tuple[str, ...] = ()  # names or patterns the person passes on purpose
    credentials: tuple[str, ...] = AGENT_CREDENTIALS  # plus the variable the configured key is in
    # variables below the environment (the person's ~/.claude/settings.json `env`): the environment's
    # own value wins, and the same filter applies (settings/claude_user.py)
    defaults: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def withholds(self, name: str) -> bool:
        """Whether a variable of this name is kept from child processes."""
        if any(fnmatchcase(name, pattern) for pattern in self.passthrough):
            return False
        if name in self.credentials:
            return True
        upper = name.upper()
        return any(fnmatchcase(upper, pattern) for pattern in SECRET_PATTERNS)

    def build(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """`environ` (default: this process's environment) without what is withheld."""
        merged = self._merged(environ)
        return {name: value for name, value in merged.items() if not self.withholds(name)}

    def withheld(self, environ: Mapping[str, str] | None = None) -> list[str]:
        """The names of `environ` that `build` leaves out, sorted (for messages, never the values)."""
        return sorted(name for name in self._merged(environ) if self.withholds(name))

    def _merged(self, environ: Mapping[str, str] | None) -> dict[str, str]:
        """`environ` (default: this process's environment) over `defaults`."""
        return {**dict(self.defaults), **(os.environ if environ is None else environ)}
