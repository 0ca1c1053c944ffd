"""URLs and addresses for the web tools: what a URL names (`Target`), and whether an address is one
the public internet reaches.

A URL is parsed once, here, and the request is built from the parts parsed (the host checked is the
host connected to: no second parser reads the authority differently). Loopback, private, link-local
(169.254.169.254, the cloud metadata service) and every other address that is not global are
`special`: the fetch reaches them only with an explicit rule for that host (permission.py), and
every address a name resolves to is checked, on every redirect hop, before the one connected to is
pinned (fetch.py).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import quote, urljoin, urlsplit

_SAFE_PATH = "/%:@!$&'()*+,;=-._~"
_SAFE_QUERY = _SAFE_PATH + "?"
_LEGACY_IPV4 = re.compile(r"^[0-9a-fx.]+$")  # 127.1, 0x7f.0.0.1, 2130706433: inet_aton reads them


class UrlError(ValueError):
    """A URL the web tools do not fetch; the message says why, in one line."""


@dataclass(frozen=True)
class Target:
    scheme: str  # http | https
    host: str  # lowercase ASCII (IDNA), no trailing dot, an IPv6 address without brackets
    port: int
    path: str  # path and query, starting with "/"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.netloc}{self.path}"

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = {"http": 80, "https": 443}[self.scheme]
        return host if self.port == default else f"{host}:{self.port}"

    def join(self, location: str) -> Target:
        """Where a redirect's Location points, from this URL."""
        return parse_url(urljoin(self.url, location))


def normalize_host(host: str) -> str:
    """`Docs.Python.org.` -> `docs.python.org`; `[::1]` -> `::1`; `bücher.de` -> `xn--bcher-kva.de`."""
    host = host.strip().lower().rstrip(".").removeprefix("[").removesuffix("]")
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise UrlError(f"the host {host!r} is not a valid domain name ({exc})") from None


def parse_url(text: str) -> Target:
    """The parts of an http(s) URL, or a UrlError saying why it is not fetched."""
    text = text.strip() if isinstance(text, str) else ""
    if not text:
        raise UrlError("the URL is empty")
    if any(ord(c) < 0x21 or c == "\x7f" for c in text) or "\\" in text:
        raise UrlError(f"{text[:200]!r} is not a URL: it holds spaces, control characters or backslashes")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise UrlError(f"{text[:200]!r} is not a URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = f"the scheme {scheme}:" if scheme else "no scheme"
        raise UrlError(f"{text[:200]!r} has {shown}: web_fetch reads http:// and https:// URLs only")
    if "@" in parts.netloc:
        raise UrlError("URLs with a user or password (user:password@host) are not fetched")
    if not parts.hostname:
        raise UrlError(f"{text[:200]!r} names no host")
    host = normalize_host(parts.hostname)
    path = quote(parts.path or "/", safe=_SAFE_PATH)
    if parts.query:
        path += "?" + quote(parts.query, safe=_SAFE_QUERY)
    return Target(scheme, host, port or {"http": 80, "https": 443}[scheme], path)


def host_of(url: object) -> str | None:
    """The normalized host of a URL, or None when it is not one web_fetch would fetch."""
    try:
        return parse_url(url if isinstance(url, str) else "").host
    except UrlError:
        return None


def special_kind(address: str) -> str | None:
    """None for an address the public internet reaches; else what it is ("loopback", "private",
    "link-local", or "non-public"), looking through IPv4-mapped, 6to4 and Teredo IPv6 addresses."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "non-public"
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is not None:
            return special_kind(str(inner)) or (None if ip.ipv4_mapped else _kind(ip))
    return _kind(ip)


def _kind(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if ip.is_loopback or ip.is_unspecified:  # connecting to 0.0.0.0 or :: reaches this machine
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_private:
        return "private"
    if not ip.is_global or ip.is_multicast:
        return "non-public"
    return None


def literal_kind(host: str) -> str | None:
    """What a host written as an address (or `localhost`) is, without asking DNS; None for a name
    (its addresses are checked when it is resolved) or a public address."""
    if host == "localhost" or host.endswith(".localhost"):
        return "loopback"
    try:
        ipaddress.ip_address(host)
        return special_kind(host)
    except ValueError:
        pass
    if _LEGACY_IPV4.match(host):
        try:
            return special_kind(socket.inet_ntoa(socket.inet_aton(host)))
        except OSError:
            return None
    return None


async def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (an address is itself), in the resolver's order."""
    try:
        ipaddress.ip_address(host)
        return [host]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise UrlError(f"cannot resolve {host}: {exc.strerror or exc}") from None
    addresses: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise UrlError(f"cannot resolve {host}: no address")
    return addresses


def pinned(addresses: list[str], host: str, special_ok: bool) -> str:
    """The address to connect to, once all of them are checked: a name that resolves to any
    non-public address (DNS rebinding mixes them) is refused unless `special_ok` (an explicit rule)."""
    for address in addresses:
        kind = special_kind(address)
        if kind and not special_ok:
            what = f"{host} is" if address == host else f"{host} resolves to {address},"
            raise UrlError(
                f"{what} a {kind} address: web_fetch reaches loopback, private "
                f"and link-local addresses only with an explicit rule for that host, "
                f"WebFetch(domain:{host})"
            )
    return addresses[0]
