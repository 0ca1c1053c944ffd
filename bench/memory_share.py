"""The session-memory note's share of a session's weighted input (issue 9, item 7; goal <= 3%).

    .venv/bin/python bench/memory_share.py [--prompts 8] [--steps 6] [--json]

An interactive session (the TUI's backend, no UI) against the local fake Anthropic API with its
prompt-cache simulation: `--prompts` person's messages, each answered after `--steps` tool calls that
read this repository's own source files and run commands over them, then a short answer. The note is
updated in the background between turns whenever DESIGN §7's thresholds say so, as in real use.
Weighted input = uncached x1 + cache write x1.25 + cache read x0.1, from the usage the server
reported (the session log's `assistant` and `summarizer_usage` events).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_cli.agent.parts import SessionSetup  # noqa: E402
from agent_cli.api.compose import compose_session  # noqa: E402
from agent_cli.llm.anthropic import AnthropicProvider  # noqa: E402
from agent_cli.settings.config import Config  # noqa: E402
from bench._args import count  # noqa: E402
from tests.fakeapi.replies import text, tool_call  # noqa: E402
from tests.fakeapi.server import FakeAnthropic  # noqa: E402

GOAL = 0.03


def weighted(usage: dict[str, int]) -> float:
    return (
        usage.get("input_tokens", 0)
        + 1.25 * usage.get("cache_creation_input_tokens", 0)
        + 0.1 * usage.get("cache_read_input_tokens", 0)
    )


def _workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="memory-share-")) / "repo"
    shutil.copytree(ROOT / "agent_cli", root / "agent_cli")
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def _script(server: FakeAnthropic, files: list[str], prompt: int, steps: int) -> None:
    for step in range(steps):
        path = files[(prompt * steps + step) % len(files)]
        if step % 3 == 2:
            server.push(tool_call("bash", {"command": f"grep -n 'def ' {path} | head -40"}))
        else:
            server.push(tool_call("read_file", {"path": path}, say=f"Reading {path}."))
    server.push(text(f"Done with part {prompt + 1}: the files read so far are consistent."))


async def measure(prompts: int, steps: int) -> dict[str, Any]:
    workspace = _workspace()
    files = sorted(str(p.relative_to(workspace)) for p in (workspace / "agent_cli").rglob("*.py"))
    files = [f for f in files if (workspace / f).stat().st_size > 3_000]
    server = FakeAnthropic(separate_summaries=True).start()
    try:
        provider = AnthropicProvider(api_key="sk-ant-bench", base_url=server.url)
        config = Config(model="claude-sonnet-5-5", permission_mode="yolo")
        session = compose_session(config, provider, SessionSetup(workspace, None, interactive=True))
        for prompt in range(prompts):
            _script(server, files, prompt, steps)
            async for _ in session.submit(f"Part {prompt + 1}: look through the next files."):
                pass
            await session.wait_background()  # a person reads the answer before typing the next prompt
        events = [json.loads(x) for x in (session.session_dir / "events.jsonl").read_text().splitlines()]
    finally:
        server.stop()
        shutil.rmtree(workspace.parent, ignore_errors=True)
    turns = [e["usage"] for e in events if e["type"] == "assistant" and e.get("usage")]
    notes = [e["usage"] for e in events if e["type"] == "summarizer_usage" and e.get("purpose") == "memory"]
    other = [e["usage"] for e in events if e["type"] == "summarizer_usage" and e.get("purpose") != "memory"]
    turn_w, note_w, other_w = (sum(weighted(u) for u in group) for group in (turns, notes, other))
    total = turn_w + note_w + other_w
    note_input = sum(
        u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] for u in notes
    )
    return {
        "prompts": prompts,
        "steps": steps,
        "requests": len(turns),
        "note_updates": len(notes),
        "weighted_input": round(total),
        "note_weighted": round(note_w),
        "note_share": round(note_w / total, 4) if total else 0.0,
        "other_summarizer_weighted": round(other_w),
        "note_cache_read_share": round(sum(u["cache_read_input_tokens"] for u in notes) / note_input, 3)
        if note_input
        else 0.0,
        "goal": GOAL,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=count, default=8)
    parser.add_argument("--steps", type=count, default=6)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(measure(args.prompts, args.steps))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    met = "met" if result["note_share"] <= GOAL else "NOT met"
    print(
        f"| {result['prompts']} x {result['steps']} | {result['requests']} | {result['note_updates']} | "
        f"{result['weighted_input']:,} | {result['note_weighted']:,} | **{result['note_share']:.1%}** | "
        f"{result['note_cache_read_share']:.0%} | <= {GOAL:.0%} {met} |"
    )


if __name__ == "__main__":
    main()
