"""Model providers behind the `Provider` protocol (llm/base.py)."""
