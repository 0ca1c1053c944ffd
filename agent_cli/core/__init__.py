"""Types, events and errors every layer shares: messages, blocks, usage, the event stream.

May import: core.
"""
