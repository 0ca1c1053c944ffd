"""One file however the model spells its path: the session stamps each call with the file as the
workspace names it (agent/workspace_reads.py:name_files), and the context keys files by that
(context/working_set.py:path_of), so `app.py`, `./app.py` and `/abs/ws/app.py` are one file to the
predictor, the ghosts and the ledger — and stay one after the session is resumed from its log."""

from __future__ import annotations

import json

from agent_cli.agent.workspace_reads import workspace_file
from agent_cli.context.reuse import predict

from .helpers import make_session, run


def _app(workspace):
    (workspace / "app.py").write_text("".join(f"value_{n} = {n}\n" for n in range(40)))


def test_the_workspace_names_a_file_relative_to_it_and_anything_outside_absolute(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    assert workspace_file(ws, "src/a.py") == workspace_file(ws, f"{ws}/src/./a.py") == "src/a.py"
    assert workspace_file(ws, "./src//a.py") == workspace_file(ws, "lib/../src/a.py") == "src/a.py"
    assert workspace_file(ws, "/etc/hosts") == "/etc/hosts"
    assert workspace_file(ws, "../other/b.py") == f"{tmp_path.as_posix()}/other/b.py"
    assert workspace_file(ws, "") == workspace_file(ws, "a\x00b") == ""


async def test_a_read_under_one_spelling_and_an_edit_under_another_are_one_file(workspace):
    _app(workspace)
    calls = [
        {"name": "read_file", "input": {"path": "app.py"}},
        {
            "name": "edit_file",
            "input": {"path": "./app.py", "old_string": "value_5 = 5", "new_string": "x = 5"},
        },
        {
            "name": "edit_file",
            "input": {"path": f"{workspace}/app.py", "old_string": "value_3 = 3", "new_string": "x = 3"},
        },
    ]
    session = make_session(workspace, [{"tool_calls": [call]} for call in calls] + [{"text": "done"}])
    await run(session, "tidy app.py")
    uses = [b for m in session.engine.messages for b in m.blocks if b.type == "tool_use"]
    assert [b.meta.file for b in uses] == ["app.py"] * 3
    guess = predict(session.engine.messages)
    assert guess[uses[0].id].cls == "editing"  # the read of the file being edited, not an unedited read
    assert guess[uses[2].id].cls == "patch" and guess[uses[1].id].cls == "patch"
    assert (
        list(session.engine.ledger.files) == ["app.py"] and session.engine.ledger.files["app.py"].edited == 2
    )
    # the log keeps the names, so a resumed session keys its files the same way
    logged = [
        block
        for line in session.log.path.read_text().splitlines()
        if (event := json.loads(line)).get("type") == "assistant"
        for block in event["message"]["content"]
        if block.get("type") == "tool_use"
    ]
    assert [b["meta"]["file"] for b in logged] == ["app.py"] * 3
    session.close()
    resumed = make_session(workspace, [{"text": "ok"}], resume=session.session_id)
    assert predict(resumed.engine.messages)[uses[0].id].cls == "editing"
    resumed.close()
