"""Model providers behind one Provider protocol: Anthropic, OpenAI-compatible, scripted; the model registry.

May import: core, llm.
"""
