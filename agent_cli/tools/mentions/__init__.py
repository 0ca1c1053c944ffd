"""What a person names in a prompt: `@path` mentions (with `#L20-45` line ranges), absolute paths of
images pasted or dropped into the terminal, and the workspace's file list they complete against.

- `parse.py`: finding mentions and pasted image paths in the person's words;
- `resolve.py`: what each one is (a text file to read, a directory to list, an image), or the one
  line that says why it cannot be attached (missing, binary);
- `index.py`: the workspace's files, gitignore-aware (`rg --files`, else our own walk), and fuzzy
  matching over them for `@` completion, fast on 100k-file trees (bench/mentions.py).
"""
