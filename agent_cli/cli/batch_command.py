"""`agent batch`: its flags, handed to the batch driver (agent_cli/batch/driver.py)."""

from pathlib import Path
from typing import Any


def add_batch(app: Any) -> None:
    """Add the `batch` subcommand to the typer app."""
    import typer

    @app.command(options_metavar="[OPTIONS]")
    def batch(
        tasks: Path = typer.Argument(
            ..., metavar="TASKS.jsonl", help="One task a line: {id, prompt, repo, ref?, options?}."
        ),
        output: Path | None = typer.Option(
            None,
            "--output",
            "-o",
            metavar="RESULTS.jsonl",
            help="Results, appended as tasks end (default: TASKS.results.jsonl).",
        ),
        workers: int | None = typer.Option(
            None,
            "--workers",
            "-w",
            metavar="N",
            help="Tasks at once: worker processes (or a local Ray's CPUs). Default 4.",
        ),
        max_concurrency: int | None = typer.Option(
            None, "--max-concurrency", metavar="N", help="At most N agents calling the model at once."
        ),
        model: str | None = typer.Option(
            None, "--model", "-m", metavar="NAME", help="Model name (a task's options may override)."
        ),
        permission_mode: str | None = typer.Option(
            None,
            "--permission-mode",
            metavar="MODE",
            help="As for -p: ask | auto-edit | plan | yolo (or Claude Code's names).",
        ),
        allowed_tools: list[str] = typer.Option(
            [], "--allowed-tools", "--allowedTools", metavar="RULES", help="Rules to allow."
        ),
        disallowed_tools: list[str] = typer.Option(
            [], "--disallowed-tools", "--disallowedTools", metavar="RULES", help="Rules to deny."
        ),
        max_turns: int | None = typer.Option(None, "--max-turns", metavar="N", help="Model calls per task."),
        use_ray: bool = typer.Option(
            False, "--ray", help="Run the tasks as Ray tasks (a local Ray unless --ray-address)."
        ),
        ray_address: str | None = typer.Option(
            None, "--ray-address", metavar="ADDRESS", help="A Ray cluster: ray://HEAD:10001 (implies --ray)."
        ),
        workdir: Path | None = typer.Option(
            None,
            "--workdir",
            metavar="DIR",
            help="Where the tasks' checkouts go (default: RESULTS.work/ beside the results).",
        ),
        retry_failed: bool = typer.Option(
            False, "--retry-failed", help="Run again the tasks whose result is an error."
        ),
    ) -> None:
        """Run many headless tasks, each in its own git worktree or clone, on worker processes or Ray."""
        from agent_cli.api.options import Options
        from agent_cli.batch.driver import BatchArgs, run_batch

        results = output or tasks.with_name(tasks.stem + ".results.jsonl")
        options = Options(
            model=model,
            permission_mode=permission_mode,
            allowed_tools=tuple(allowed_tools),
            disallowed_tools=tuple(disallowed_tools),
            max_turns=max_turns,
        )
        args = BatchArgs(
            tasks=tasks,
            results=results,
            options=options,
            workers=workers,
            max_concurrency=max_concurrency,
            ray=use_ray,
            ray_address=ray_address,
            workdir=workdir,
            retry_failed=retry_failed,
        )
        raise typer.Exit(run_batch(args))
