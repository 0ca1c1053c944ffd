"""`web_fetch(url, prompt?)`: a web page, read as Markdown, entering the context like any large output.

Every page is kept whole in the session's store under the call's ref. Without `prompt` a page within
`offload_result_chars` enters whole; a larger one enters as a head+tail `<persisted-output>` preview
with that ref (the shape T0 offload and bash's capture write), so `recall(ref, pattern=…)` finds any
line of it. With `prompt` the session's summarizer model reads the
page (its first `PROMPT_PAGE_CHARS`) and answers; the model gets the answer, and the whole page is
still stored under a ref. A URL fetched before in the session is read from the cache (cache.py): no
request, and the result says so. The page is someone else's text: it goes to the summarizer inside a
`<web-page>` element and reaches the context escaped (core/tags.py), so it cannot forge our tags.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_cli.core.errors import ToolError
from agent_cli.core.persisted import persisted_text, preview, safe_ref
from agent_cli.core.tags import element, escape_tags
from agent_cli.tools.base import OutputStore, ToolContext, ToolResult
from agent_cli.tools.fs import reports_tool_errors, str_arg
from agent_cli.tools.web.address import Target, UrlError, parse_url
from agent_cli.tools.web.cache import CachedPage, PageCache
from agent_cli.tools.web.fetch import FetchError, FetchLimits, Redirected, fetch
from agent_cli.tools.web.markdown import page_text

PROMPT_PAGE_CHARS = 200_000  # what the summarizer reads of a page (~50k tokens)
PAGE_TAG = "web-page"


@dataclass(frozen=True)
class _Got:
    """A page's text, where this call keeps it, and what is said about it."""

    page: CachedPage
    text: str
    ref: str  # this call's copy in the session's store ("" without one)
    path: str | None  # the file it is in, when the store is on disk
    cached: bool


class WebFetchTool:
    name = "web_fetch"
    description = (
        "Fetch a web page (http/https) as Markdown. A large page comes back as a preview with a ref: "
        "recall(ref, pattern=...) finds the rest. With `prompt`, a small model answers it from the page. "
        "Repeated URLs come from the session's cache. A redirect to another host is reported, not "
        "followed. Never put secrets or private data in a URL."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The page's full URL (http:// or https://)."},
            "prompt": {
                "type": "string",
                "description": "What to find out from the page (optional).",
            },
        },
        "required": ["url"],
    }
    read_only = True  # it changes nothing here; permission is by host (tools/web/permission.py)
    compactable = True

    def __init__(
        self,
        limits: FetchLimits | None = None,
        *,
        special_ok: Callable[[str], bool] = lambda host: False,
        answer_prompt: str = "",
        cache: PageCache | None = None,
        clock: Callable[[], float] = time.time,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.limits = limits or FetchLimits()
        self.special_ok = special_ok  # an explicit WebFetch(domain:HOST) allow rule for this host
        self.answer_prompt = answer_prompt  # the summarizer's system prompt (prompts/web_fetch.md)
        self.cache = cache if cache is not None else PageCache()
        self.clock = clock
        self.verify = verify

    def target(self, input: dict[str, Any]) -> str:
        return str(input.get("url", ""))

    def paths(self, input: dict[str, Any]) -> list[str]:
        return []

    @reports_tool_errors
    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        url = str_arg(input, "url")
        prompt = str_arg(input, "prompt", required=False).strip()
        try:
            target = parse_url(url)
        except UrlError as exc:
            raise ToolError(f"web_fetch: {exc}") from None
        got = await self._page(target, ctx)
        if isinstance(got, ToolResult):
            return got
        if not got.text.strip():
            return ToolResult(f"{_header(got)}\nThe page has no text.", meta=_meta(got))
        if prompt:
            return await self._answer(got, prompt, ctx)
        return self._whole_or_preview(got, ctx)

    async def _page(self, target: Target, ctx: ToolContext) -> _Got | ToolResult:
        """The page from the cache, or fetched (and cached); an error or redirect as a result."""
        cached = self.cache.get(target.url)
        text = cached.read() if cached is not None else None
        if cached is not None and text is not None:
            ref, path = _store(ctx, text)
            return _Got(cached, text, ref, path, cached=True)
        try:
            got = await fetch(target, self.limits, self.special_ok, self.verify)
        except FetchError as exc:
            return ToolResult(f"web_fetch: {exc}", is_error=True, meta={"url": target.url})
        if isinstance(got, Redirected):
            return ToolResult(
                f"{got.url} redirects (HTTP {got.status}) to another host: {got.location} (not "
                f'followed: to read that page, call web_fetch with url "{got.location}")',
                meta={"url": got.url, "redirect": got.location},
            )
        converted = await asyncio.to_thread(page_text, got.body, got.content_type, got.charset)
        ref, path = _store(ctx, converted.text)
        page = CachedPage(
            target.url,
            got.url,
            got.status,
            got.content_type,
            converted.title,
            self.clock(),
            got.truncated,
            ref=ref,
            store=ctx.store if ref else None,
            text=None if ref else converted.text,
        )
        self.cache.put(page)
        return _Got(page, converted.text, ref, path, cached=False)

    def _whole_or_preview(self, got: _Got, ctx: ToolContext, note: str = "") -> ToolResult:
        header = _header(got) + (f"\n{note}" if note else "")
        meta = _meta(got)
        if len(got.text) + len(header) + 2 <= ctx.limits.inline_chars:
            return ToolResult(f"{header}\n\n{escape_tags(got.text)}", meta=meta)
        if not got.ref:  # no store to keep it in: head and tail, the gap said
            return ToolResult(
                f"{header}\n\n{escape_tags(preview(got.text, ctx.limits.inline_chars))}", meta=meta
            )
        shown = persisted_text(got.ref, got.text, got.path, ctx.limits.preview_chars)
        meta.update(output_ref=got.ref, output_chars=len(got.text))
        return ToolResult(f"{shown}\n{header}", meta=meta)

    async def _answer(self, got: _Got, prompt: str, ctx: ToolContext) -> ToolResult:
        if ctx.side_model is None:
            return self._whole_or_preview(
                got, ctx, "(No summarizer model in this session: the page follows.)"
            )
        shown = got.text[:PROMPT_PAGE_CHARS]
        content = f"{element(PAGE_TAG, shown, url=got.page.final_url)}\n\n{prompt}"
        try:
            answer = (await ctx.side_model(self.answer_prompt, content)).strip()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the page is still there: show it instead
            why = f"{type(exc).__name__}: {exc}".strip()
            return self._whole_or_preview(got, ctx, f"(The summarizer failed ({why}): the page follows.)")
        cut = (
            f" The summarizer read its first {len(shown):,} chars of {len(got.text):,}."
            if len(shown) < len(got.text)
            else ""
        )
        where = (
            f'The whole page ({len(got.text):,} chars) is kept under ref "{got.ref}": recall(ref='
            f'"{got.ref}", pattern=...) finds the lines you need.'
            if got.ref
            else "Fetch it again without a prompt to read the page itself."
        )
        body = f"Answer to {prompt!r} from the page:\n\n{escape_tags(answer)}\n\n{where}{cut}"
        return ToolResult(f"{_header(got)}\n{body}", meta={**_meta(got), "page_ref": got.ref})


def _store(ctx: ToolContext, text: str) -> tuple[str, str | None]:
    """Keep `text` in the session's store under the call's ref: (the ref, its file), or ("", None)
    when there is no store (or it cannot be written: the text then stays in memory)."""
    store = ctx.store if isinstance(ctx.store, OutputStore) and ctx.call_id else None
    if store is None:
        return "", None
    ref = safe_ref(ctx.call_id)
    try:
        sink = store.open_output(ref)
        sink.write(text)
        path = sink.close()
    except (OSError, ValueError):
        return "", None
    return ref, str(path) if path else None


def _header(got: _Got) -> str:
    page = got.page
    kind = page.content_type or "no Content-Type"
    title = f'; title "{escape_tags(page.title[:200])}"' if page.title else ""
    line = f"web_fetch {page.final_url}: HTTP {page.status}, {kind}, {len(got.text):,} chars{title}"
    if page.final_url != page.url:
        line += f"\n(redirected from {page.url})"
    if page.truncated:
        line += "\n(The page was larger than the download limit: only its start was read.)"
    if got.cached:
        fetched = time.strftime("%H:%M:%S", time.localtime(page.fetched_at))
        line += f"\n(From this session's cache: fetched at {fetched}; no network request was made.)"
    return line


def _meta(got: _Got) -> dict[str, Any]:
    return {"url": got.page.final_url, "status": got.page.status, "cached": got.cached}
