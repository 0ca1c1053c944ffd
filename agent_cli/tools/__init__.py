"""Tools the model can call (the Tool protocol is in tools/base.py)."""
