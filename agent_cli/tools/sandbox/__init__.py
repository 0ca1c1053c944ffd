"""How a command the agent starts is confined: bubblewrap (bwrap.py), the protected paths that make
code run later (protected.py), git directories planted anywhere in the workspace and the git
settings that run a program (gitdirs.py, gitconfig.py), the unix-socket filter (seccomp.py), the
environment children get (child_env.py). Part of tools/: imports only core and tools."""
