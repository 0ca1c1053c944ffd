"""The web tools: `web_fetch` (a page, as Markdown, offloaded like any large output) and the
optional `web_search`. URLs and the addresses they resolve to (address.py), the request itself
with the address pinned (fetch.py), HTML to Markdown (markdown.py), the session's page cache
(cache.py), `WebFetch(domain:…)` rules (permission.py), the tools (tool.py, search.py).
Part of tools/: imports only core and tools; httpx2 and markdownify are imported when a page is fetched.
"""
