"""The GitHub Action (action.yml) and the script it runs (.github/agent_action.py), without GitHub:
the inputs become `agent -p` flags, the real agent runs against the local Messages-API server, and
the step's outputs, the JSON result file and the job summary are what a workflow would get."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from tests.e2e import AGENT, anthropic_env
from tests.fakeapi.replies import Fault, text, tool_call

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("agent_action", ROOT / ".github" / "agent_action.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


action = _script()


def test_action_yml_is_a_composite_action_whose_inputs_reach_the_script():
    spec = yaml.safe_load((ROOT / "action.yml").read_text())
    assert spec["runs"]["using"] == "composite"
    assert {"prompt", "model", "permission_mode", "allowed_tools", "max_turns", "anthropic_api_key"} <= set(
        spec["inputs"]
    )
    steps = {step.get("id") or step["name"]: step for step in spec["runs"]["steps"]}
    run = steps["run"]
    assert run["env"]["ANTHROPIC_API_KEY"] == "${{ inputs.anthropic_api_key }}"
    assert ".github/agent_action.py" in run["run"]
    for step in spec["runs"]["steps"]:  # an input is never pasted into a shell line
        assert "inputs." not in step.get("run", ""), step["name"]
    used = set(re.findall(r"inputs\.(\w+)", (ROOT / "action.yml").read_text()))
    assert used <= set(spec["inputs"]), used - set(spec["inputs"])
    env_inputs = {k.removeprefix("INPUT_").lower() for k in run["env"] if k.startswith("INPUT_")}
    assert env_inputs | {
        "anthropic_api_key",
        "base_url",
        "python_version",
        "agent_package",
        "upload_session",
    } == set(spec["inputs"])
    upload = steps["Upload the session"]
    assert upload["uses"].startswith("actions/upload-artifact@") and "always()" in upload["if"]
    assert "steps.run.outputs.session_dir" in upload["with"]["path"]


def test_inputs_become_the_flags_of_agent_p(tmp_path):
    env = {
        "AGENT_COMMAND": "/opt/venv/bin/agent",
        "INPUT_PROMPT": "fix the failing test; don't touch docs",
        "INPUT_MODEL": "claude-haiku-4-5",
        "INPUT_PERMISSION_MODE": "acceptEdits",
        "INPUT_ALLOWED_TOOLS": "Bash(npm test:*) Edit",
        "INPUT_DISALLOWED_TOOLS": "Bash(git push:*)",
        "INPUT_MAX_TURNS": "12",
        "INPUT_AGENT_ARGS": "--budget-tokens 90000 --trust-workspace",
    }
    assert action.command(env, tmp_path) == [
        "/opt/venv/bin/agent",
        "-p",
        "--output-format",
        "json",
        "--model",
        "claude-haiku-4-5",
        "--permission-mode",
        "acceptEdits",
        "--allowed-tools",
        "Bash(npm test:*) Edit",
        "--disallowed-tools",
        "Bash(git push:*)",
        "--max-turns",
        "12",
        "--budget-tokens",
        "90000",
        "--trust-workspace",
        "--",
        "fix the failing test; don't touch docs",
    ]
    (tmp_path / "task.md").write_text("--model x is part of the prompt\n")
    assert action.command({"INPUT_PROMPT_FILE": "task.md"}, tmp_path)[-2:] == [
        "--",
        "--model x is part of the prompt\n",
    ]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "no prompt: set the `prompt` input"),
        ({"INPUT_PROMPT": "x", "INPUT_PROMPT_FILE": "a.md"}, "not both"),
        ({"INPUT_PROMPT_FILE": "missing.md"}, "prompt_file missing.md: No such file"),
        ({"INPUT_PROMPT": "x", "INPUT_MAX_TURNS": "ten"}, "max_turns 'ten': a positive whole number"),
        ({"INPUT_PROMPT": "x", "INPUT_AGENT_ARGS": "--model 'open"}, "agent_args: No closing quotation"),
    ],
)
def test_inputs_in_error_are_one_line_and_exit_2(tmp_path, capsys, env, message):
    outputs = tmp_path / "outputs"
    assert action.main({**env, "INPUT_WORKING_DIRECTORY": str(tmp_path), "GITHUB_OUTPUT": str(outputs)}) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not outputs.exists()


def _github(tmp_path: Path, server, **inputs: str) -> dict[str, str]:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    (tmp_path / "runner").mkdir(exist_ok=True)
    env = anthropic_env(repo, server)
    env.update(
        AGENT_COMMAND=shlex.join(AGENT),
        RUNNER_TEMP=str(tmp_path / "runner"),
        GITHUB_OUTPUT=str(tmp_path / "runner" / "output"),
        GITHUB_STEP_SUMMARY=str(tmp_path / "runner" / "summary.md"),
        INPUT_WORKING_DIRECTORY=str(repo),
        **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
    )
    return env


def _outputs(path: Path) -> dict[str, str]:
    found = re.findall(r"^(\w+)<<(EOF_\w+)\n(.*?)\n\2$", path.read_text(), re.DOTALL | re.MULTILINE)
    return {name: text for name, _, text in found}


def test_a_run_writes_the_outputs_the_result_file_and_the_job_summary(tmp_path, fake_anthropic, capsys):
    fake_anthropic.push(
        tool_call("write_file", {"path": "fixed.txt", "content": "ok\n"}),
        text("Fixed it.\n\n```\nall ``` green\n```"),
    )
    env = _github(tmp_path, fake_anthropic, prompt="fix it", permission_mode="acceptEdits", max_turns="5")

    assert action.main(env) == 0, capsys.readouterr().err

    assert (tmp_path / "repo" / "fixed.txt").read_text() == "ok\n"
    outputs = _outputs(tmp_path / "runner" / "output")
    result = json.loads(Path(outputs["result_file"]).read_text())
    assert result["type"] == "result" and result["subtype"] == "success" and result["num_turns"] == 2
    assert outputs["conclusion"] == "success" and outputs["session_id"] == result["session_id"]
    assert outputs["result"] == "Fixed it.\n\n```\nall ``` green\n```"  # several lines, whole
    assert Path(outputs["session_dir"], "events.jsonl").is_file()
    assert outputs["artifact_name"] == f"agent-session-{result['session_id']}"
    summary = (tmp_path / "runner" / "summary.md").read_text()
    assert summary.startswith("## agent done\n\nFixed it.")
    assert "| turns | 2 |" in summary and f"`{result['session_id']}` (uploaded as an artifact)" in summary
    block = re.search(r"(`{4,})json\n(.*?)\n\1", summary, re.DOTALL)  # a fence the answer cannot close
    assert block and json.loads(block.group(2)) == result
    request = fake_anthropic.requests[0]
    assert request["messages"][0]["content"][-1]["text"].endswith("fix it")


def test_a_failed_run_is_a_failure_with_its_json_in_the_summary(tmp_path, fake_anthropic):
    fake_anthropic.push(Fault(400, "invalid_request_error", "nope, not this one"))
    env = _github(tmp_path, fake_anthropic, prompt="do it")

    assert action.main(env) == 1

    outputs = _outputs(tmp_path / "runner" / "output")
    assert outputs["conclusion"] == "failure"
    summary = (tmp_path / "runner" / "summary.md").read_text()
    assert summary.startswith("## agent failed") and "nope, not this one" in summary
    assert '"is_error": true' in summary


def test_no_key_still_gives_the_json_result_and_the_summary(tmp_path, fake_anthropic):
    env = _github(tmp_path, fake_anthropic, prompt="do it")
    env.pop("ANTHROPIC_API_KEY")

    assert action.main(env) == 2

    result = json.loads((tmp_path / "runner" / "agent-result.json").read_text())
    assert result["is_error"] is True and "No API key" in result["result"]
    assert _outputs(tmp_path / "runner" / "output")["conclusion"] == "failure"
    assert "No API key" in (tmp_path / "runner" / "summary.md").read_text()
    assert fake_anthropic.requests == []


def test_the_script_needs_only_the_standard_library():
    imported = set(
        re.findall(
            r"^(?:import|from) (\w+)", (ROOT / ".github" / "agent_action.py").read_text(), re.MULTILINE
        )
    )
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
