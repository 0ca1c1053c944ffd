"""Background shells: `bash` with `run_in_background` starts one and returns its id at once; the
model reads what is new with `bash_output` and stops one with `kill_shell`. The modules:
- `manager.py`: the session's shells (start, end, kill, close at the session's end);
- `output.py`: a shell's output streamed into the session store, under the storage ceiling;
- `tools.py`: the `bash_output` and `kill_shell` tools;
- `reminders.py`: what the model is reminded of while shells run (after a compaction, at an end).

May import: core, tools.
"""
