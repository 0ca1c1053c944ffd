"""`web_search(query)`: offered only when the person configured a search endpoint (`[web] search_url`
in their own config; a repository's config cannot set it, settings/layers.py).

The provider is any SearXNG-compatible JSON endpoint (`GET URL?q=…&format=json` answering
`{"results": [{"title", "url", "content"}, …]}`): SearXNG is free software anyone can run, and
several hosted search APIs offer the same shape. The query goes to that endpoint alone; the results
are someone else's text and reach the context escaped. A result's page is read with web_fetch, whose
permission is by host as always.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from agent_cli.core.errors import ToolError
from agent_cli.core.tags import escape_tags
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.fs import int_arg, reports_tool_errors, str_arg

DEFAULT_RESULTS = 8
MAX_RESULTS = 20
SNIPPET_CHARS = 400


class WebSearchTool:
    name = "web_search"
    description = (
        "Search the web. Returns up to `max_results` results (default 8), each with its title, URL and "
        "a snippet. Read a result's page with web_fetch. The query is sent to the person's search "
        "service: never put secrets, file contents or anything private in it."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to search for."},
            "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS},
        },
        "required": ["query"],
    }
    read_only = True
    compactable = True

    def __init__(self, search_url: str, timeout: float = 30.0) -> None:
        self.search_url = search_url
        self.timeout = timeout

    def target(self, input: dict[str, Any]) -> str:
        return str(input.get("query", ""))

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        import httpx2

        query = str_arg(input, "query").strip()
        if not query:
            raise ToolError("web_search: the query is empty")
        count = int_arg(input, "max_results", DEFAULT_RESULTS, 1, MAX_RESULTS)
        glue = "&" if "?" in self.search_url else "?"
        url = f"{self.search_url}{glue}{urlencode({'q': query, 'format': 'json'})}"
        try:
            async with httpx2.AsyncClient(timeout=self.timeout, trust_env=False) as client:
                response = await client.get(url, headers={"Accept": "application/json"})
        except httpx2.TimeoutException:
            raise ToolError(f"web_search: the search service timed out after {self.timeout:g} s") from None
        except httpx2.HTTPError as exc:
            raise ToolError(
                f"web_search: the search service cannot be reached: {type(exc).__name__}"
            ) from None
        if response.status_code != 200:
            raise ToolError(f"web_search: the search service answered HTTP {response.status_code}")
        try:
            results = response.json().get("results")
        except (ValueError, AttributeError):
            results = None
        if not isinstance(results, list):
            raise ToolError("web_search: the search service's answer is not SearXNG's JSON (no results list)")
        lines = []
        for result in [r for r in results if isinstance(r, dict) and r.get("url")][:count]:
            title = " ".join(str(result.get("title") or "(no title)").split())[:200]
            snippet = " ".join(str(result.get("content") or "").split())[:SNIPPET_CHARS]
            lines.append(
                f"{len(lines) + 1}. {title}\n   {result['url']}" + (f"\n   {snippet}" if snippet else "")
            )
        if not lines:
            return ToolResult(f"No results for {query!r}.", meta={"query": query, "results": 0})
        text = f"Results for {query!r}:\n\n" + "\n".join(lines)
        return ToolResult(escape_tags(text), meta={"query": query, "results": len(lines)})
