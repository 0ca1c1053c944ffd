"""`@` mentions, images, `!` and `#` through the real CLI (`agent -p`) against the local API servers:
what the model's request holds is what the person named — a file as a read of it, an image as an
image block, a command's output — and what cannot be attached is one clear line, nothing sent for it."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess

from PIL import Image

from tests.e2e import agent, anthropic_env, openai_agent, run_agent
from tests.fakeapi.replies import text

JSON = ("--output-format", "json")


def _uses(request: dict) -> list[tuple[str, dict]]:
    return [
        (b["name"], b["input"]) for m in request["messages"] for b in m["content"] if b["type"] == "tool_use"
    ]


def _results(request: dict) -> list[dict]:
    return [b for m in request["messages"] for b in m["content"] if b["type"] == "tool_result"]


def test_a_mention_is_attached_as_a_read_and_a_bad_one_is_one_line(workspace, fake_anthropic):
    (workspace / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    (workspace / "tool.bin").write_bytes(b"\x7fELF" + bytes(range(256)) * 4)
    fake_anthropic.push(text("Lines 20 to 22 count up."))
    out = agent(workspace, fake_anthropic, "-p", "why @app.py#L20-22, @nope.py and @tool.bin?", *JSON)
    assert out.returncode == 0, out.stderr
    request = fake_anthropic.requests[-1]
    assert _uses(request) == [("read_file", {"path": "app.py", "offset": 20, "limit": 3})]
    (result,) = _results(request)
    assert result["content"].startswith("    20\tline 20\n    21\tline 21\n    22\tline 22")
    assert "why @app.py#L20-22, @nope.py and @tool.bin?" in json.dumps(request["messages"][0])
    warnings = [line for line in out.stderr.splitlines() if "not attached" in line]
    assert warnings == [
        "warning: @nope.py: no such file or directory — not attached",
        "warning: @tool.bin: a binary file (ELF), not text — not attached",
    ]


def test_a_read_deny_rule_binds_a_mention(workspace, fake_anthropic):
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key.txt").write_text("TOP-SECRET\n")
    fake_anthropic.push(text("ok"))
    out = agent(
        workspace, fake_anthropic, "-p", "show @secrets/key.txt", "--disallowed-tools", "Read(secrets/**)"
    )
    assert out.returncode == 0, out.stderr
    assert "TOP-SECRET" not in json.dumps(fake_anthropic.requests[-1])
    assert "@secrets/key.txt: denied by the rule Read(secrets/**)" in out.stderr


def test_a_planted_link_out_of_the_workspace_is_not_read_without_asking(workspace, fake_anthropic, tmp_path):
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = PLANTED\n")
    (workspace / "NOTES.md").symlink_to(secret)  # an innocent name inside, a secret outside
    fake_anthropic.push(text("ok"), text("ok"))
    out = agent(workspace, fake_anthropic, "-p", "summarize @NOTES.md")
    assert out.returncode == 0, out.stderr
    assert "PLANTED" not in json.dumps(fake_anthropic.requests[-1])
    assert "@NOTES.md: not attached without a person to ask (it reads outside the workspace)" in out.stderr
    named = agent(workspace, fake_anthropic, "-p", f"summarize @{secret}")  # named outside: the person's yes
    assert named.returncode == 0, named.stderr
    assert "PLANTED" in json.dumps(fake_anthropic.requests[-1])


def _png(path, size, noise: bool = False) -> None:
    if noise:
        Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3)).save(path, compress_level=1)
    else:
        Image.new("RGB", size, (30, 90, 200)).save(path)


def test_an_image_path_reaches_the_request_as_an_image_block_and_counts(workspace, fake_anthropic, tmp_path):
    fake_anthropic.push(text("A blue rectangle."), text("Nothing to see."))
    shot = tmp_path / "Screen Shot.png"  # outside the workspace, a space in its name: as dropped
    _png(shot, (1200, 900))
    quoted = str(shot).replace(" ", "\\ ")
    out = agent(workspace, fake_anthropic, "-p", f"what is {quoted} showing?", *JSON)
    assert out.returncode == 0, out.stderr
    request = fake_anthropic.requests[-1]
    assert _uses(request) == [("read_file", {"path": str(shot)})]
    (result,) = _results(request)
    caption, image = result["content"]
    assert caption["type"] == "text" and "1200x900" in caption["text"]
    assert image["type"] == "image" and image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(image["source"]["data"]))).size == (1200, 900)
    with_image = json.loads(out.stdout)["context"]["used"]
    plain = agent(workspace, fake_anthropic, "-p", "what is showing?", *JSON)
    without = json.loads(plain.stdout)["context"]["used"]
    assert with_image - without >= 1200 * 900 // 750  # the gauge's number counts the image


def test_a_40_mb_image_is_scaled_down_and_a_corrupt_one_is_one_line(workspace, fake_anthropic):
    big = workspace / "photo.png"
    _png(big, (3700, 3700), noise=True)
    assert big.stat().st_size > 40_000_000
    (workspace / "broken.png").write_bytes(big.read_bytes()[:5000])
    fake_anthropic.push(text("Noise."))
    out = agent(workspace, fake_anthropic, "-p", "look at @photo.png and @broken.png", *JSON)
    assert out.returncode == 0, out.stderr
    request = fake_anthropic.requests[-1]
    assert _uses(request) == [("read_file", {"path": "photo.png"})]
    (result,) = _results(request)
    caption, image = result["content"]
    assert "scaled down from 3700x3700" in caption["text"]
    data = base64.b64decode(image["source"]["data"])
    width, height = Image.open(io.BytesIO(data)).size
    assert max(width, height) <= 1568 and width * height <= 1_150_000
    assert len(image["source"]["data"]) <= 5 * 1024 * 1024
    (line,) = [line for line in out.stderr.splitlines() if "broken.png" in line]  # one line, nothing sent
    assert line.startswith("warning: @broken.png: a corrupt PNG image (") and line.endswith(
        ") — not attached"
    )


def test_an_openai_compatible_server_gets_the_image_after_the_tool_message(workspace, fake_openai):
    _png(workspace / "chart.png", (300, 200))
    fake_openai.push(text("A chart."))
    out = openai_agent(workspace, fake_openai, "-p", "@chart.png what is it?", "--model", "gpt-5", *JSON)
    assert out.returncode == 0, out.stderr
    messages = fake_openai.requests[-1]["messages"]
    roles = [m["role"] for m in messages]
    tool = roles.index("tool")
    assert "[the image is in the user message that follows]" in messages[tool]["content"]
    after = messages[tool + 1]
    assert after["role"] == "user"
    assert after["content"][0]["type"] == "image_url"
    assert after["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_bang_runs_the_command_and_the_output_reaches_the_next_request(workspace, fake_anthropic):
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    fake_anthropic.push(text("app.py and README.md are untracked."))
    rule = ("--allowed-tools", "Bash(git status:*)")
    out = agent(workspace, fake_anthropic, "-p", "!git status --short", *rule, *JSON)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert "?? app.py" in data["result"] and data["is_error"] is False and not fake_anthropic.requests
    nxt = agent(workspace, fake_anthropic, "-p", "what is untracked?", "--continue", *JSON)
    assert nxt.returncode == 0, nxt.stderr
    request = fake_anthropic.requests[-1]
    assert (
        "bash",
        {"command": "git status --short", "description": "run by the person (! in the prompt)"},
    ) in (_uses(request))
    assert any("?? app.py" in r["content"] for r in _results(request))
    denied = agent(workspace, fake_anthropic, "-p", "!rm app.py", "--continue", *JSON)  # no rule: refused
    assert json.loads(denied.stdout)["is_error"] is True and (workspace / "app.py").exists()
    assert "denied: bash rm app.py" in denied.stderr


def test_hash_adds_a_line_to_the_memory_file(workspace, fake_anthropic, tmp_path):
    (workspace / "CLAUDE.md").write_text("# Notes\r\n- be brief\r\n", newline="")
    out = agent(workspace, fake_anthropic, "-p", "# run tests with pytest -q", *JSON)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["result"] == "Remembered in CLAUDE.md: - run tests with pytest -q"
    assert (
        workspace / "CLAUDE.md"
    ).read_bytes() == b"# Notes\r\n- be brief\r\n- run tests with pytest -q\r\n"
    (workspace / "CLAUDE.md").unlink()
    outside = tmp_path / "elsewhere.md"
    outside.write_text("mine\n")
    (workspace / "AGENTS.md").symlink_to(outside)  # a repository's link out of the workspace
    refused = agent(workspace, fake_anthropic, "-p", "# remember this", *JSON)
    assert json.loads(refused.stdout)["is_error"] is True
    assert "AGENTS.md points outside the workspace" in json.loads(refused.stdout)["result"]
    assert outside.read_text() == "mine\n" and not fake_anthropic.requests


def test_piped_text_is_data_not_commands_or_mentions(workspace, fake_anthropic):
    fake_anthropic.push(text("A README."))
    piped = "![build](https://ci.example/badge.svg)\nSee @app.py for the code.\n"
    out = run_agent(workspace, anthropic_env(workspace, fake_anthropic), "-p", "-", *JSON, stdin=piped)
    assert out.returncode == 0, out.stderr
    request = fake_anthropic.requests[-1]
    assert _uses(request) == [] and "not attached" not in out.stderr  # nothing run, nothing attached
    assert piped.rstrip("\n") in [b.get("text") for b in request["messages"][0]["content"]]
