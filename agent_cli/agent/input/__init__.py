"""What a person's prompt becomes before the model sees it.

- `calls.py`: calls the person makes (a mention's read, a `!` command) as tool pairs in the view,
  exactly like the model's own, so the working set, unchanged re-reads, offload and clearing treat
  them alike;
- `mentions.py`: `@path` (and `@path#L20-45`, and a pasted image path) attached as a read, each
  one's token cost shown before sending (`describe`), the files `@` completes against;
- `shell.py`: a prompt starting with `!` runs the command (bash: its permission rules, its sandbox,
  its caps), and the command and its output stay as context for the next turn;
- `memory_line.py`: a prompt starting with `#` adds a line to the workspace's memory file;
- `router.py`: `PersonInput`, which sends a prompt to one of them.
"""
