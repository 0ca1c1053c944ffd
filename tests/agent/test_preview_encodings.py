"""The permission question's diff reads the file as edit_file does: a Latin-1 or UTF-16 file shows
the edit that then succeeds, not "old_string is not in the file"."""

from __future__ import annotations

import pytest

from agent_cli.core.events import PermissionRequest

from .helpers import make_session, run

EDIT = {"path": "menu.py", "old_string": "crème brûlée", "new_string": "crème caramel"}


@pytest.mark.parametrize("codec", ["latin-1", "utf-16"])
async def test_the_preview_of_an_edit_to_a_non_utf8_file_is_its_diff(workspace, codec):
    (workspace / "menu.py").write_bytes('dessert = "crème brûlée"\r\nprint(dessert)\r\n'.encode(codec))
    session = make_session(
        workspace,
        [{"tool_calls": [{"name": "edit_file", "input": EDIT}]}, {"text": "ok"}],
        mode="ask",
        interactive=True,
    )
    asked: list[PermissionRequest] = []

    async def answer(event):
        if isinstance(event, PermissionRequest):
            asked.append(event)
            event.future.set_result("allow_once")

    await run(session, "go", answer)
    [question] = asked
    assert question.detail_kind == "diff", question.detail
    assert '-dessert = "crème brûlée"' in question.detail and '+dessert = "crème caramel"' in question.detail
    # and the edit the person allowed did what the preview showed, in the file's own encoding
    assert (workspace / "menu.py").read_bytes() == 'dessert = "crème caramel"\r\nprint(dessert)\r\n'.encode(
        codec
    )


async def test_the_preview_of_an_edit_to_a_mostly_utf8_file_shows_its_odd_byte_as_read_file_does(workspace):
    data = 'dessert = "crème brûlée"\nprice = "3\xa4"\n'.encode().replace(b"\xc2\xa4", b"\xa4")
    (workspace / "menu.py").write_bytes(data)
    edit = {"path": "menu.py", "old_string": 'price = "3\\xa4"', "new_string": 'price = "4\\xa4"'}
    session = make_session(
        workspace,
        [{"tool_calls": [{"name": "edit_file", "input": edit}]}, {"text": "ok"}],
        mode="ask",
        interactive=True,
    )
    asked: list[PermissionRequest] = []

    async def answer(event):
        if isinstance(event, PermissionRequest):
            asked.append(event)
            event.future.set_result("allow_once")

    await run(session, "go", answer)
    [question] = asked
    assert question.detail_kind == "diff", question.detail
    assert '-price = "3\\xa4"' in question.detail and '+price = "4\\xa4"' in question.detail
    assert (workspace / "menu.py").read_bytes() == data.replace(b'"3\xa4"', b'"4\xa4"')
