from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.extensions.mcp.config import ServerSpec

REPO = Path(__file__).resolve().parents[3]
TOOLBOX = ("-m", "tests.mcp_servers.toolbox")


def toolbox_spec(name: str = "box", **env: str) -> ServerSpec:
    return ServerSpec(
        name, "test", "stdio", command=sys.executable, args=TOOLBOX, env={"PYTHONPATH": str(REPO), **env}
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_toolbox() -> Iterator[str]:
    """The toolbox over streamable HTTP on 127.0.0.1; yields its URL once it accepts connections."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, *TOOLBOX, "--http", str(port)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60  # a guard against a server that never starts, not a timing
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the HTTP toolbox exited with {proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
