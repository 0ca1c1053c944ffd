"""McpManager against real servers: the test toolbox (stdio and streamable HTTP), commands that
do not exist or die at once. Every failure is a clear status or error, never a hang."""

from __future__ import annotations

import base64
import io
import sys

from PIL import Image

from agent_cli.core.images import MAX_PIXELS
from agent_cli.extensions.mcp.config import ServerSpec
from agent_cli.extensions.mcp.manager import McpManager
from agent_cli.extensions.mcp.tool import MAX_RESULT_CHARS, McpTool
from agent_cli.tools.base import ToolContext
from tests.agent.mcp.conftest import toolbox_spec


def _tool(manager: McpManager, server: str, name: str) -> McpTool:
    status = next(s for s in manager.statuses() if s.name == server)
    info = next(t for t in status.tools if t.name == name)
    return McpTool(server, info, manager)


async def test_toolbox_tools_and_results_as_the_model_reads_them(tmp_path):
    changes = []
    manager = McpManager([toolbox_spec()], workspace=tmp_path, on_change=changes.append)
    try:
        await manager.wait(60)
        [status] = manager.statuses()
        assert status.state == "connected", status.describe()
        names = {t.name: t for t in status.tools}
        assert names["echo"].read_only and not names["write_note"].read_only
        ctx = ToolContext(tmp_path)

        echo = _tool(manager, "box", "echo")
        assert echo.name == "mcp__box__echo"
        assert (await echo.run({"text": "hi"}, ctx)).output == "echo: hi"

        failed = await _tool(manager, "box", "fail").run({"reason": "no disk"}, ctx)
        assert failed.is_error and "no disk" in failed.output

        big = await _tool(manager, "box", "big").run({"megabytes": 5}, ctx)
        assert not big.is_error and big.meta["chars"] > 5_000_000
        assert len(big.output) < MAX_RESULT_CHARS + 1_000
        assert big.output.startswith("BIG-START") and big.output.endswith("BIG-END")

        picture = (await _tool(manager, "box", "picture").run({}, ctx)).output
        assert "a caption" in picture and "[image from mcp server 'box': PNG, 40x30, ≈2 tokens]" in picture
        assert "file:///tmp/report.pdf" in picture
    finally:
        await manager.aclose()
    assert [c.state for c in changes] == ["connected"]  # stopping on purpose is not reported


async def test_an_image_a_tool_returns_is_sent_as_an_image_or_one_clear_line(tmp_path):
    manager = McpManager([toolbox_spec()], workspace=tmp_path)
    try:
        await manager.wait(60)
        picture = _tool(manager, "box", "picture")
        ctx = ToolContext(tmp_path)
        results = {
            kind: await picture.run({"kind": kind}, ctx) for kind in ("png", "large", "svg", "broken", "two")
        }
    finally:
        await manager.aclose()
    png = results["png"]
    assert png.image is not None and png.image.media_type == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(png.image.data))).size == (40, 30)
    assert png.meta["image"] == [40, 30]

    large = results["large"]  # scaled to the API's limits, as read_file scales a large file
    assert large.image is not None
    width, height = Image.open(io.BytesIO(base64.b64decode(large.image.data))).size
    assert width * height <= MAX_PIXELS and abs(width / height - 4 / 3) < 0.01
    assert f"PNG, {width}x{height}, scaled down from 3200x2400" in large.output

    for kind, why in [
        (
            "svg",
            "[image from mcp server 'box': not a PNG, JPEG, GIF or WebP image (image/svg+xml, 6 bytes); not attached]",
        ),
        ("broken", "[image from mcp server 'box': image/png; not attached: its data is not valid base64]"),
    ]:
        result = results[kind]
        assert result.image is None and not result.is_error
        assert why in result.output and "a caption" in result.output, result.output

    two = results["two"]  # a tool result carries one image: the first is sent, the second said
    assert two.image is not None and "PNG, 40x30" in two.output
    assert "image/png, " in two.output and "not attached: a result carries one image" in two.output


async def test_a_server_that_exits_mid_call_gives_an_error_and_is_reported_once(tmp_path):
    changes = []
    manager = McpManager([toolbox_spec()], workspace=tmp_path, on_change=changes.append)
    try:
        await manager.wait(60)
        ctx = ToolContext(tmp_path)
        crash = await _tool(manager, "box", "crash").run({}, ctx)
        assert crash.is_error and "'box'" in crash.output
        assert "crashing on purpose" in crash.output  # the server's last stderr line says why
        again = await _tool(manager, "box", "echo").run({"text": "hi"}, ctx)
        assert again.is_error and "not available" in again.output
    finally:
        await manager.aclose()
    assert [c.state for c in changes] == ["connected", "dead"]


async def test_a_call_that_never_answers_times_out(tmp_path):
    manager = McpManager([toolbox_spec()], workspace=tmp_path, call_timeout=0.5)
    try:
        await manager.wait(60)
        result = await _tool(manager, "box", "hang").run({}, ToolContext(tmp_path))
        assert result.is_error and "no answer from MCP server 'box' within 0.5 s" in result.output
        still = await _tool(manager, "box", "echo").run({"text": "after"}, ToolContext(tmp_path))
        assert still.output == "echo: after"  # the server itself is fine
    finally:
        await manager.aclose()


async def test_servers_that_cannot_start_fail_with_the_reason(tmp_path):
    specs = [
        ServerSpec("ghost", "test", "stdio", command="no-such-mcp-server-xyz"),
        ServerSpec(
            "dies", "test", "stdio", command=sys.executable, args=("-c", "import sys; sys.exit('bad token')")
        ),
    ]
    changes = []
    manager = McpManager(specs, workspace=tmp_path, on_change=changes.append)
    try:
        await manager.wait(60)
        by_name = {s.name: s for s in manager.statuses()}
    finally:
        await manager.aclose()
    assert by_name["ghost"].describe() == "failed: command not found: no-such-mcp-server-xyz"
    assert by_name["dies"].state == "failed" and "bad token" in by_name["dies"].reason
    assert sorted(c.name for c in changes) == ["dies", "ghost"]


async def test_streamable_http_transport(tmp_path, http_toolbox):
    spec = ServerSpec("web", "test", "http", url=http_toolbox, headers={"X-Test": "1"})
    manager = McpManager([spec], workspace=tmp_path)
    try:
        await manager.wait(60)
        [status] = manager.statuses()
        assert status.state == "connected", status.describe()
        result = await _tool(manager, "web", "echo").run({"text": "over http"}, ToolContext(tmp_path))
        assert result.output == "echo: over http"
    finally:
        await manager.aclose()


async def test_an_unreachable_url_fails(tmp_path):
    spec = ServerSpec("nowhere", "test", "http", url="http://127.0.0.1:9/mcp")
    manager = McpManager([spec], workspace=tmp_path, connect_timeout=20)
    try:
        await manager.wait(60)
        [status] = manager.statuses()
    finally:
        await manager.aclose()
    assert status.state == "failed" and "127.0.0.1:9" in status.reason
