"""Persistence and recovery: the event log, its lock and torn-tail recovery, process records, signals,
opening and resuming a session, checkpoints and rewind. Never the loop.

May import: core, context, session.
"""
