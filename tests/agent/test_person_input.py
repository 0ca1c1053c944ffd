"""What a person's prompt becomes, on the real session (scripted model, `--debug` invariants on): an
`@` mention is a read the engine treats as any read (the model's own re-read of the file is
"unchanged since" it), it survives a resume, and a `!` command sits in the log and the view as a
tool pair the next prompt follows without a stand-in."""

from __future__ import annotations

from agent_cli.agent.input.calls import is_person_use
from agent_cli.context.invariants import check
from agent_cli.context.working_set import UNCHANGED_PREFIX
from agent_cli.core.events import Notice, ToolFinished, TurnFinished
from agent_cli.core.prompt import Prompt, PromptPart

from .helpers import make_session, run

READ = {"name": "read_file", "input": {"path": "app.py"}}


def _app(workspace):
    (workspace / "app.py").write_text("".join(f"value_{n} = {n}\n" for n in range(40)))


async def test_a_mention_is_a_read_the_models_own_reread_knows(workspace):
    _app(workspace)
    session = make_session(workspace, [{"tool_calls": [READ]}, {"text": "done"}])
    events = await run(session, "what is in @app.py?")
    first, second = [e.output for e in events if isinstance(e, ToolFinished)]
    assert "value_20 = 20" in first
    assert second.startswith(UNCHANGED_PREFIX)  # the mention's read is still in view, word for word
    view = session.engine.messages
    assert [b for b in view[1].blocks if is_person_use(b)] == list(view[1].blocks)  # the person's call
    assert not check(view)
    session.close()
    reopened = make_session(workspace, [{"text": "again"}], resume=session.session_id)
    assert reopened.engine.messages == view  # the log replays it exactly
    assert session.engine.ledger.files  # the ledger saw the read


async def test_a_bang_command_stays_as_a_tool_pair_the_next_prompt_follows(workspace):
    _app(workspace)
    session = make_session(workspace, [{"text": "I see app.py."}])
    events = await run(session, "!ls")
    finished = [e for e in events if isinstance(e, TurnFinished)][-1]
    assert finished.stop_reason == "command" and "app.py" in finished.result
    assert not session.provider.requests  # the model was not called
    await run(session, "what did ls show?")
    sent = session.provider.requests[-1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[1]["content"][0]["input"]["command"] == "ls"
    assert "app.py" in sent[2]["content"][0]["content"]
    assert "no response" not in str(sent)  # no stand-in: the note after the command keeps the roles
    assert not check(session.engine.messages)


async def test_pasted_parts_are_separate_blocks_and_mentions_in_a_paste_are_data(workspace):
    _app(workspace)
    session = make_session(workspace, [{"text": "ok"}])
    prompt = Prompt(
        [
            PromptPart("compare "),
            PromptPart("see @app.py in this log\n" * 3, pasted=True),
            PromptPart(" please"),
        ]
    )
    events = await run(session, prompt)
    words = [b.text for b in session.engine.messages[0].blocks if not b.meta.tag]
    assert words == ["compare ", "see @app.py in this log\n" * 3, " please"]
    assert not any(isinstance(e, ToolFinished) for e in events)  # a mention inside a paste attaches nothing
    assert not [e for e in events if isinstance(e, Notice) and "not attached" in e.text]
