"""`agent batch`: many headless tasks at once, each in its own git checkout, on local worker
processes or on Ray.

`tasks.py` reads the batch file; `checkout.py` makes each task's worktree or clone and commits its
work on `agent/batch/<id>`; `worker.py` runs one task on the Python API (`api.Session`); `local.py`
and `ray_engine.py` are the engines; `engine.py` what they report and how they are stopped;
`results.py` the results file the driver alone appends to; `progress.py` and `summary.py` what the
person sees; `driver.py` puts them together.

May import: core, context, llm, tools, session, settings, extensions, agent, api, batch.
"""
