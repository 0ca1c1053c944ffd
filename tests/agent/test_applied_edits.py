"""An applied edit's old text leaves the context before any request has cached it: the model wrote
it, the file no longer holds it, and clearing it then rewrites nothing
(context/tiers/pricing.py:candidates_of). It is a T1 clear like any other (logged, recallable),
but a routine one: the transcript shows no compaction notice for it."""

from __future__ import annotations

import json

from .helpers import make_session, run

OLD = "".join(f"value_{n} = {n}\n" for n in range(10, 24))  # longer than micro_keep_chars


async def test_the_next_request_carries_the_edit_without_its_old_text_and_no_notice_is_shown(workspace):
    (workspace / "app.py").write_text("".join(f"value_{n} = {n}\n" for n in range(40)))
    edit = {"path": "app.py", "old_string": OLD, "new_string": "values = list(range(10, 24))\n"}
    failed = {"path": "app.py", "old_string": OLD.replace("value", "nothing"), "new_string": "x\n"}
    responses = [
        {"tool_calls": [{"name": "read_file", "input": {"path": "app.py"}}]},
        {"tool_calls": [{"name": "edit_file", "input": edit}]},
        {"tool_calls": [{"name": "edit_file", "input": failed}]},  # not in the file: it stays as written
        {"text": "done"},
    ]
    session = make_session(workspace, responses)
    events = await run(session, "fold the values into a list")
    assert "values = list(range(10, 24))" in (workspace / "app.py").read_text()

    sent = session.provider.requests[2]  # the request right after the edit
    uses = [b for m in sent.messages if isinstance(m["content"], list) for b in m["content"]]
    applied = next(b for b in uses if b.get("type") == "tool_use" and b["name"] == "edit_file")
    assert applied["input"]["old_string"].startswith("[cleared: ")
    assert applied["input"]["new_string"] == edit["new_string"]  # the file's own change stays
    last = session.provider.requests[3]
    calls = [b for m in last.messages if isinstance(m["content"], list) for b in m["content"]]
    wrong = [b for b in calls if b.get("type") == "tool_use" and b["name"] == "edit_file"][-1]
    assert wrong["input"]["old_string"] == failed["old_string"]  # a failed edit's old text is kept

    assert not [e for e in events if e.kind == "compaction"]  # routine: no notice in the transcript
    logged = [
        event["compaction"]
        for line in session.log.path.read_text().splitlines()
        if (event := json.loads(line)).get("type") == "compaction"
    ]
    assert [(c["tier"], c["trigger"], c["bet"]["rewrite"]) for c in logged] == [("T1", "pressure", 0)]
    ref = logged[0]["refs"][0]
    assert json.loads(session.engine.store.get(ref))["old_string"] == OLD  # recallable, byte for byte
