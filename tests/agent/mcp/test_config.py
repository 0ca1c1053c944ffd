"""Server entries: Claude Code's .mcp.json shape and config tables; a bad file or entry costs only
itself, with one line naming the file (or server) and the error."""

from __future__ import annotations

import json

from agent_cli.extensions.mcp.config import load_servers


def _write(workspace, data) -> None:
    (workspace / ".mcp.json").write_text(data if isinstance(data, str) else json.dumps(data))


def test_mcp_json_and_config_tables_with_variables(tmp_path):
    _write(
        tmp_path,
        {
            "mcpServers": {
                "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "${REPO:-.}"]},
                "api": {
                    "type": "http",
                    "url": "https://${HOST}/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                },
                "old": {"type": "sse", "url": "http://localhost:3000/sse"},
            }
        },
    )
    user = {"time": {"command": "python", "args": ["-m", "mcp_server_time"], "env": {"TZ": "UTC"}}}
    workspace_table = {"git": {"command": "git-mcp"}}  # the workspace config wins over .mcp.json
    loaded = load_servers(
        tmp_path, user, workspace_table, trusted=True, env={"HOST": "example.com", "TOKEN": "t0k"}
    )
    assert loaded.problems == ()
    by_name = {s.name: s for s in loaded.servers}
    assert by_name["time"].env == {"TZ": "UTC"} and by_name["time"].transport == "stdio"
    assert by_name["git"].command == "git-mcp" and by_name["git"].origin == ".agent/config.toml"
    assert by_name["api"].url == "https://example.com/mcp"
    assert by_name["api"].headers == {"Authorization": "Bearer t0k"}
    assert by_name["old"].transport == "sse"


def test_an_untrusted_workspace_uses_only_the_user_servers(tmp_path):
    _write(tmp_path, {"mcpServers": {"repo": {"command": "evil"}}})
    loaded = load_servers(tmp_path, {"mine": {"command": "ok"}}, {"ws": {"command": "x"}}, trusted=False)
    assert [s.name for s in loaded.servers] == ["mine"]


def test_a_malformed_file_is_one_line_naming_it_and_the_rest_works(tmp_path):
    _write(tmp_path, '{"mcpServers": {"a": {"command": "x"},}}')
    loaded = load_servers(tmp_path, {"mine": {"command": "ok"}}, {}, trusted=True)
    assert [s.name for s in loaded.servers] == ["mine"]
    [problem] = loaded.problems
    assert str(tmp_path / ".mcp.json") in problem and "invalid JSON at line 1" in problem


def test_a_bad_entry_costs_only_that_server(tmp_path):
    _write(
        tmp_path,
        {
            "mcpServers": {
                "good": {"command": "ok"},
                "nothing": {"args": ["x"]},
                "weird": {"type": "websocket", "url": "ws://x"},
                "unset": {"command": "x", "env": {"KEY": "${NOT_SET_ANYWHERE}"}},
                "bad name!": {"command": "x"},
                "args": {"command": "x", "args": "--flag"},
            }
        },
    )
    loaded = load_servers(tmp_path, {}, {}, trusted=True, env={})
    assert [s.name for s in loaded.servers] == ["good"]
    text = "\n".join(loaded.problems)
    assert len(loaded.problems) == 5
    assert "'nothing' in .mcp.json: needs a \"command\"" in text
    assert "type 'websocket' is not supported" in text
    assert "NOT_SET_ANYWHERE is not set" in text
    assert '"args" must be a list of strings' in text


def test_mcp_servers_must_be_an_object(tmp_path):
    _write(tmp_path, {"mcpServers": ["a"]})
    loaded = load_servers(tmp_path, {}, {}, trusted=True)
    assert loaded.servers == () and '"mcpServers" must be an object' in loaded.problems[0]
