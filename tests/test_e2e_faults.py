"""Faults end cleanly, through the real CLI against the local Messages-API server: a full disk is one
line and a non-zero exit with nothing half-written, SIGTERM under `--output-format json` still prints
a JSON result, and a stream that stops sending is abandoned and retried. Waits are for conditions."""

from __future__ import annotations

import json
import shlex
import shutil
import signal
import subprocess

import pytest

from tests.e2e import AGENT, anthropic_env, run_agent
from tests.fakeapi.replies import Stall, text
from tests.test_e2e_crash import PATIENCE, assert_all_requests_valid, spawn, wait_for


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /tmp"], capture_output=True
    )
    return probe.returncode == 0


def test_a_full_disk_is_one_line_a_non_zero_exit_and_nothing_half_written(workspace, fake_anthropic):
    """The sessions live on a 256 KiB tmpfs (a mount namespace of this test's own); it is filled up
    between two runs, and freed again for the third."""
    if not _can_mount_tmpfs():
        pytest.skip("needs `unshare -Urm` and a tmpfs mount to make a disk that fills up")
    server = fake_anthropic
    server.push(text("First answer."), text("Third answer."))
    sessions, out = workspace.parent / "small-disk", workspace.parent / "out"
    sessions.mkdir()
    out.mkdir()
    run = " ".join(shlex.quote(a) for a in AGENT)
    big_prompt = "prompt 2 " + "x" * 9_000  # its event needs pages the disk no longer has
    script = f"""
        mount -t tmpfs -o size=256k tmpfs {sessions}
        {run} -p 'prompt 1' --output-format json > {out}/1.json 2> {out}/1.err; echo $? > {out}/1.rc
        cp {sessions}/*/events.jsonl {out}/after-1.jsonl
        dd if=/dev/zero of={sessions}/filler bs=4k 2> /dev/null
        {run} -p '{big_prompt}' --continue --output-format json > {out}/2.json 2> {out}/2.err
        echo $? > {out}/2.rc
        cp {sessions}/*/events.jsonl {out}/after-2.jsonl
        rm {sessions}/filler
        {run} -p 'prompt 3' --continue --output-format json > {out}/3.json 2> {out}/3.err; echo $? > {out}/3.rc
    """
    env = {**anthropic_env(workspace, server), "AGENT_SESSIONS_DIR": str(sessions)}
    done = subprocess.run(
        ["unshare", "-Urm", "sh", "-c", script], cwd=workspace, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr

    def said(n: int) -> tuple[int, str, str]:
        return (
            int((out / f"{n}.rc").read_text()),
            (out / f"{n}.json").read_text(),
            (out / f"{n}.err").read_text(),
        )

    code, stdout, stderr = said(1)
    assert code == 0, stderr
    code, stdout, stderr = said(2)
    assert code != 0
    (line,) = stderr.splitlines()
    assert line.startswith("agent: cannot write the session log: No space left on device (")
    assert line.endswith("events.jsonl)") and "Traceback" not in stderr
    data = json.loads(stdout)
    assert data["is_error"] is True and "No space left on device" in data["result"]
    assert (out / "after-2.jsonl").read_bytes() == (out / "after-1.jsonl").read_bytes()  # not a byte more
    code, stdout, stderr = said(3)
    assert code == 0, stderr
    assert json.loads(stdout)["result"] == "Third answer." and "cut off" not in stderr
    sent = json.dumps(server.requests[-1]["messages"])
    assert "prompt 1" in sent and "prompt 3" in sent and "prompt 2" not in sent
    assert_all_requests_valid(server)


def test_sigterm_during_a_json_run_prints_a_json_error_result(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(Stall(reply=text("never finished")))
    proc = spawn(workspace, server, "-p", "take your time", "--output-format", "json")
    wait_for(lambda: server.requests or proc.poll() is not None, "the request to reach the server")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=PATIENCE)
    server.release()
    assert proc.returncode == 143, err
    data = json.loads(out)
    assert data["is_error"] is True and data["stop_reason"] == "interrupted"
    assert any("SIGTERM" in e for e in data["errors"]) and data["session_id"]
    assert "stopped by SIGTERM" in err and "Traceback" not in err


def test_sigterm_with_stream_json_ends_with_a_result_line(workspace, fake_anthropic):
    server = fake_anthropic
    server.push(Stall(reply=text("never finished")))
    proc = spawn(workspace, server, "-p", "take your time", "--output-format", "stream-json")
    wait_for(lambda: server.requests or proc.poll() is not None, "the request to reach the server")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=PATIENCE)
    server.release()
    assert proc.returncode == 143, err
    last = json.loads(out.splitlines()[-1])
    assert last["type"] == "result" and last["is_error"] is True and last["stop_reason"] == "interrupted"


def test_a_stream_that_stops_sending_is_retried_and_said(workspace, fake_anthropic):
    """`AGENT_STREAM_IDLE_TIMEOUT=1`: the first answer stalls after its start and never goes on."""
    server = fake_anthropic
    server.push(Stall(reply=text("never sent")), text("Recovered."))
    env = {**anthropic_env(workspace, server), "AGENT_STREAM_IDLE_TIMEOUT": "1"}
    run = run_agent(workspace, env, "-p", "hello", "--output-format", "stream-json")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    (retry,) = [line for line in lines if line["type"] == "retrying"]
    assert retry["reason"] == "no data from the API for 1 s" and retry["attempt"] == 1
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "Recovered."
    assert len(server.requests) == 2
    server.push(Stall(reply=text("never sent")), text("Recovered again."))
    text_run = run_agent(workspace, env, "-p", "again", "--continue")
    assert text_run.stdout.strip() == "Recovered again."
    assert "no data from the API for 1 s" in text_run.stderr and "retrying in" in text_run.stderr
