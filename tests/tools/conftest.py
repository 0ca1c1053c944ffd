"""Fixtures for the tool tests: a workspace in tmp_path and a helper that runs a call the way the loop does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_cli.core.types import ToolCall
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.registry import default_tools, run_call


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws)


@pytest.fixture
def call(ctx: ToolContext):
    registry = default_tools()

    async def run(name: str, **input: Any) -> ToolResult:
        return await run_call(registry, ToolCall(id="toolu_1", name=name, input=input), ctx)

    return run
