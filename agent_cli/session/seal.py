"""Which sessions this person recorded on this machine: a seal in each log's `session_start`.

A repository can ship `.agent/sessions/<id>/events.jsonl`; `--continue` (the session used last) and the
resume picker must not load such a log as the person's own history. Each session we start gets a seal:
an HMAC-SHA256 of its id and the workspace's real path under a key kept in the person's own config
folder (created 0600 on first use, outside any workspace). A session without a valid seal is passed by
when one is chosen for the person, and named in a warning when they ask for it by id.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from agent_cli.core.files import open_private, private_dir

KEY_BYTES = 32


class SessionSeal:
    def __init__(self, key_path: Path) -> None:
        self.key_path = key_path
        self._key: bytes | None = None

    def seal(self, session_id: str, workspace: Path) -> str:
        """The seal of a session we start now (the key is made on first use)."""
        return self._mac(self._load(create=True) or b"", session_id, workspace)

    def verify(self, session_id: str, workspace: Path, seal: object) -> bool:
        """Whether `seal` is the one we would have written for this session here."""
        key = self._load(create=False)
        if key is None or not isinstance(seal, str):
            return False
        return hmac.compare_digest(seal, self._mac(key, session_id, workspace))

    @staticmethod
    def _mac(key: bytes, session_id: str, workspace: Path) -> str:
        message = f"{session_id}\0{os.path.realpath(workspace)}".encode()
        return hmac.new(key, message, hashlib.sha256).hexdigest()

    def _load(self, *, create: bool) -> bytes | None:
        if self._key is not None:
            return self._key
        try:
            key = self.key_path.read_bytes()
        except FileNotFoundError:
            key = b""
        except OSError:
            return None
        if len(key) != KEY_BYTES and create:
            key = secrets.token_bytes(KEY_BYTES)
            try:
                private_dir(self.key_path.parent)
                with open(open_private(self.key_path, os.O_WRONLY | os.O_TRUNC), "wb") as fh:
                    fh.write(key)
            except OSError:
                pass  # no place to keep it: this session's seal holds for this process only
        self._key = key if len(key) == KEY_BYTES else None
        return self._key
