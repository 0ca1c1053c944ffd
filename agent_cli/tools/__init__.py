"""The tools the model calls (read, write, edit, bash, grep, …), their registry, permission rules, the sandbox.

May import: core, tools.
"""
