"""What the GitHub Action (action.yml) runs: `agent -p --output-format json` with the action's inputs,
on the checked-out repository; then the JSON result to a file, the step's outputs, and the job summary.

The inputs come as environment variables (INPUT_PROMPT, INPUT_MODEL, …), never pasted into a shell
line, so a prompt made from an issue's text cannot run commands in the workflow. The command is
`$AGENT_COMMAND` (default `agent`; the action sets its venv's). Without GitHub (a test, a dry run),
GITHUB_OUTPUT and GITHUB_STEP_SUMMARY may be unset: then nothing is written there.

Exit code: the agent's (0 done, 1 the run failed, 2 it could not start); 2 for inputs in error.
Standard library only: it runs before anything else is known to be installed.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
import threading
from pathlib import Path

FLAGS = (  # input -> flag of `agent -p`
    ("MODEL", "--model"),
    ("PERMISSION_MODE", "--permission-mode"),
    ("ALLOWED_TOOLS", "--allowed-tools"),
    ("DISALLOWED_TOOLS", "--disallowed-tools"),
    ("MAX_TURNS", "--max-turns"),
)


class InputError(ValueError):
    pass


def value(env: dict[str, str], name: str) -> str:
    return env.get(f"INPUT_{name}", "").strip()


def prompt_of(env: dict[str, str], workdir: Path) -> str:
    prompt, path = env.get("INPUT_PROMPT", ""), value(env, "PROMPT_FILE")
    if prompt.strip() and path:
        raise InputError("give `prompt` or `prompt_file`, not both")
    if path:
        try:
            prompt = (workdir / path).read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"prompt_file {path}: {exc.strerror}") from None
    if not prompt.strip():
        raise InputError("no prompt: set the `prompt` input (or `prompt_file`)")
    return prompt


def command(env: dict[str, str], workdir: Path) -> list[str]:
    """The agent's command line for these inputs."""
    argv = [*shlex.split(env.get("AGENT_COMMAND") or "agent"), "-p", "--output-format", "json"]
    for name, flag in FLAGS:
        given = value(env, name)
        if not given:
            continue
        if name == "MAX_TURNS" and not (given.isdigit() and int(given) > 0):
            raise InputError(f"max_turns {given!r}: a positive whole number")
        argv += [flag, given]
    try:
        argv += shlex.split(value(env, "AGENT_ARGS"))
    except ValueError as exc:
        raise InputError(f"agent_args: {exc}") from None
    return [*argv, "--", prompt_of(env, workdir)]


def session_dir(env: dict[str, str], workdir: Path, session_id: str) -> Path | None:
    if not session_id or "/" in session_id or session_id.startswith("."):
        return None
    root = (
        Path(env["AGENT_SESSIONS_DIR"]).expanduser()
        if env.get("AGENT_SESSIONS_DIR")
        else workdir / ".agent" / "sessions"
    )
    found = root / session_id
    return found if found.is_dir() else None


def summary(result: dict, session: Path | None, stderr_tail: str) -> str:
    """The job summary: the outcome, the answer, the figures, and the JSON object itself."""
    failed = result.get("is_error", True)
    lines = [f"## agent {'failed' if failed else 'done'}", ""]
    answer = str(result.get("result", "")).strip()
    if answer:
        lines += [answer, ""]
    usage = result.get("usage") or {}
    read = sum(
        int(usage.get(k) or 0)
        for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    lines += [
        "| | |",
        "|---|---|",
        f"| subtype | `{result.get('subtype', '')}` |",
        f"| turns | {result.get('num_turns', 0)} |",
        f"| time | {int(result.get('duration_ms') or 0) / 1000:.1f} s |",
        f"| tokens | {read:,} in · {int(usage.get('output_tokens') or 0):,} out |",
        f"| cost | ${float(result.get('total_cost_usd') or 0):.4f} |",
        f"| permission denials | {len(result.get('permission_denials') or [])} |",
        f"| session | `{result.get('session_id', '')}`{' (uploaded as an artifact)' if session else ''} |",
        "",
    ]
    if stderr_tail and failed:
        lines += ["What agent said on stderr:", "", fence(stderr_tail), ""]
    lines += [
        "<details><summary>The JSON result</summary>",
        "",
        fence(json.dumps(result, indent=2), "json"),
        "",
        "</details>",
        "",
    ]
    return "\n".join(lines)


def fence(text: str, language: str = "") -> str:
    """A code block no backtick run inside the text can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def write_outputs(path: str, outputs: dict[str, str]) -> None:
    """GitHub's `name<<DELIMITER` form, so a value may span lines."""
    with open(path, "a", encoding="utf-8") as fh:
        for name, text in outputs.items():
            delimiter = f"EOF_{secrets.token_hex(8)}"
            fh.write(f"{name}<<{delimiter}\n{text}\n{delimiter}\n")


def run(argv: list[str], workdir: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run the agent: stdout kept (the JSON result), stderr shown in the log as it comes and kept
    too (its end goes into the summary when the run failed)."""
    proc = subprocess.Popen(
        argv,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said: list[str] = []

    def relay() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            sys.stderr.write(line)
            said.append(line)

    reader = threading.Thread(target=relay, daemon=True)
    reader.start()
    assert proc.stdout is not None
    out = proc.stdout.read()
    code = proc.wait()
    reader.join()
    return subprocess.CompletedProcess(argv, code, out, "".join(said))


def main(env: dict[str, str] | None = None) -> int:
    env = dict(os.environ if env is None else env)
    workdir = Path(value(env, "WORKING_DIRECTORY") or ".").resolve()
    try:
        argv = command(env, workdir)
    except InputError as exc:
        print(f"agent action: {exc}", file=sys.stderr)
        return 2
    done = run(argv, workdir, env)
    try:
        result = json.loads(done.stdout)
        assert isinstance(result, dict)
    except (json.JSONDecodeError, AssertionError):
        tail = (done.stderr.strip() or done.stdout.strip())[-400:]
        result = {
            "type": "result",
            "subtype": "error_during_execution",
            "is_error": True,
            "result": f"agent did not print its JSON result (exit {done.returncode}): {tail}",
            "session_id": "",
        }
    temp = Path(env.get("RUNNER_TEMP") or workdir)
    result_file = temp / "agent-result.json"
    result_file.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    session = session_dir(env, workdir, str(result.get("session_id", "")))
    failed = bool(result.get("is_error", True)) or done.returncode != 0
    if env.get("GITHUB_OUTPUT"):
        write_outputs(
            env["GITHUB_OUTPUT"],
            {
                "conclusion": "failure" if failed else "success",
                "result": str(result.get("result", "")),
                "session_id": str(result.get("session_id", "")),
                "session_dir": str(session or ""),
                "result_file": str(result_file),
                "artifact_name": f"agent-session-{result.get('session_id') or 'none'}",
            },
        )
    if env.get("GITHUB_STEP_SUMMARY"):
        tail = "\n".join(done.stderr.strip().splitlines()[-20:])
        with open(env["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
            fh.write(summary(result, session, tail))
    print(
        f"agent action: {'failed' if failed else 'done'}; the JSON result is in {result_file}",
        file=sys.stderr,
    )
    return done.returncode if done.returncode else (1 if failed else 0)


if __name__ == "__main__":
    sys.exit(main())
