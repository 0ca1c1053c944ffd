"""One page over HTTP(S), with httpx2 (the HTTP client the anthropic SDK already brings).

Redirects are followed by hand: to the same host (at most `max_redirects`, a loop is named as one),
never to another host (`Redirected`: the model is told the new URL and fetches it itself, so the
person's rules judge that host). Before each hop the host's addresses are resolved and checked, and
the request goes to the checked address itself, with the host in the `Host` header and in TLS's SNI
and certificate check: a name that resolves to a public address for the check and to 127.0.0.1 for
the connection (DNS rebinding) cannot slip through. No proxy or `.netrc` from the environment, no
cookies kept, nothing sent but a GET with our headers. The whole fetch (resolution, redirects, body)
has one deadline; the body is read up to `max_bytes` (decompressed).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from dataclasses import dataclass

from agent_cli.tools.web.address import Target, UrlError, pinned, resolve

HEADERS = {
    "User-Agent": "agent-cli web_fetch (+https://github.com/agent-cli)",
    "Accept": "text/html, text/markdown;q=0.95, text/plain;q=0.9, application/xhtml+xml;q=0.9, */*;q=0.5",
}
REDIRECTS = (301, 302, 303, 307, 308)
TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/xhtml+xml",
    "application/javascript",
)
TEXT_SUFFIXES = ("+json", "+xml")


class FetchError(Exception):
    """A fetch that failed; the message is the one line the model reads."""


@dataclass(frozen=True)
class FetchLimits:
    timeout: float = 30.0  # seconds for the whole fetch: resolution, redirects, the body
    max_bytes: int = 10_000_000  # body bytes read at most (after decompression)
    max_redirects: int = 10


@dataclass(frozen=True)
class Page:
    url: str  # the URL the body came from (after same-host redirects)
    status: int
    content_type: str  # the media type, lowercase, without parameters ("" when the server sent none)
    charset: str  # from the Content-Type header ("" when none)
    body: bytes
    truncated: bool  # the body went on past max_bytes
    redirects: tuple[str, ...] = ()  # the URLs passed through, in order, before `url`


@dataclass(frozen=True)
class Redirected:
    """A redirect to another host: not followed."""

    url: str
    location: str
    status: int


async def fetch(
    target: Target,
    limits: FetchLimits,
    special_ok: Callable[[str], bool],
    verify: ssl.SSLContext | bool = True,
) -> Page | Redirected:
    """GET `target`. `special_ok(host)`: whether an explicit rule lets this host reach a loopback,
    private or link-local address. Raises FetchError with one clear line."""
    try:
        async with asyncio.timeout(limits.timeout):
            return await _fetch(target, limits, special_ok, verify)
    except TimeoutError:
        raise FetchError(f"timed out after {limits.timeout:g} s fetching {target.url}") from None


async def _fetch(
    target: Target, limits: FetchLimits, special_ok: Callable[[str], bool], verify: ssl.SSLContext | bool
) -> Page | Redirected:
    import httpx2

    visited = [target.url]
    current = target
    async with httpx2.AsyncClient(
        follow_redirects=False, trust_env=False, timeout=limits.timeout, verify=verify, headers=HEADERS
    ) as client:
        while True:
            try:
                address = pinned(
                    await resolve(current.host, current.port), current.host, special_ok(current.host)
                )
            except UrlError as exc:
                raise FetchError(str(exc)) from None
            host = f"[{address}]" if ":" in address else address
            extensions = {"sni_hostname": current.host} if current.scheme == "https" else {}
            request = client.build_request(
                "GET",
                f"{current.scheme}://{host}:{current.port}{current.path}",
                headers={"Host": current.netloc},
                extensions=extensions,
            )
            try:
                response = await client.send(request, stream=True)
            except httpx2.TimeoutException:
                raise TimeoutError from None
            except httpx2.HTTPError as exc:
                raise FetchError(f"could not fetch {current.url}: {_why(exc)}") from None
            try:
                status = response.status_code
                if status in REDIRECTS:
                    nxt = _location(current, response.headers.get("location"), status)
                    if nxt.host != current.host:
                        return Redirected(current.url, nxt.url, status)
                    if nxt.url in visited:
                        loop = " → ".join([*visited[visited.index(nxt.url) :], nxt.url])
                        raise FetchError(f"redirect loop: {loop}")
                    if len(visited) > limits.max_redirects:
                        raise FetchError(
                            f"more than {limits.max_redirects} redirects from {target.url} (last: {nxt.url})"
                        )
                    visited.append(nxt.url)
                    current = nxt
                    continue
                if status >= 400:
                    reason = f" {response.reason_phrase}" if response.reason_phrase else ""
                    raise FetchError(f"HTTP {status}{reason} from {current.url}")
                if status != 200 and status >= 300:
                    raise FetchError(f"HTTP {status} from {current.url}: no page to read")
                media, charset = _content_type(response.headers.get("content-type", ""))
                if media and not is_text(media):
                    size = response.headers.get("content-length")
                    shown = f", {int(size):,} bytes" if size and size.isdigit() else ""
                    raise FetchError(
                        f"{current.url} is binary content ({media}{shown}): web_fetch reads text "
                        "(HTML, Markdown, plain text, JSON, XML)"
                    )
                body, truncated = await _read(response, limits.max_bytes)
            except httpx2.TimeoutException:
                raise TimeoutError from None
            except httpx2.HTTPError as exc:
                raise FetchError(f"could not read {current.url}: {_why(exc)}") from None
            finally:
                await response.aclose()
            wide = charset.startswith(("utf-16", "utf-32")) or body[:2] in (b"\xff\xfe", b"\xfe\xff")
            if b"\x00" in body[:8192] and not wide:  # a text type the bytes belie: binary all the same
                said = f"{media} with" if media else "no Content-Type,"
                raise FetchError(f"{current.url} is binary content ({said} NUL bytes): web_fetch reads text")
            return Page(current.url, status, media, charset, body, truncated, tuple(visited[:-1]))


def _location(current: Target, location: str | None, status: int) -> Target:
    if not location:
        raise FetchError(f"HTTP {status} redirect from {current.url} without a Location")
    try:
        return current.join(location)
    except UrlError as exc:
        raise FetchError(
            f"{current.url} redirects to {location[:200]!r}, which is not fetched: {exc}"
        ) from None


async def _read(response, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        room = max_bytes - size
        if len(chunk) > room:
            chunks.append(chunk[:room])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def _content_type(header: str) -> tuple[str, str]:
    media, _, params = header.partition(";")
    charset = ""
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
    return media.strip().lower(), charset


def is_text(media: str) -> bool:
    return media.startswith(TEXT_TYPES) or media.endswith(TEXT_SUFFIXES)


def _why(exc: Exception) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
