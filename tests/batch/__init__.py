"""Tests of agent_cli/batch/: the batch file, results, checkouts, the summary, the slots."""
