"""A local web server for the web_fetch tests (no test touches the internet): pages by path, each a
status, headers and a body, or a redirect; a page that never answers (until the server stops), for
timeouts. `hits[path]` counts the requests each path got.

    server = PageServer().start()          # 127.0.0.1, a free port; server.url("/x") -> http://127.0.0.1:P/x
    server.page("/doc", "<html>…</html>")  # text/html unless said otherwise
    server.redirect("/old", "/doc")        # 302 to a path here, or to any URL
    server.stall("/slow")                  # never answers
    server.stop()
"""

from __future__ import annotations

import ssl
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


@dataclass(frozen=True)
class _Route:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    stall: bool = False


class PageServer:
    def __init__(self, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> None:
        self.routes: dict[str, _Route] = {}
        self.hits: Counter[str] = Counter()
        self.hosts: list[str] = []  # the Host header of every request
        self.released = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                server.hits[self.path] += 1
                server.hosts.append(self.headers.get("Host", ""))
                route = server.routes.get(
                    self.path, _Route(404, {"Content-Type": "text/plain"}, b"not found")
                )
                if route.stall:
                    server.released.wait()
                    return
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                self.wfile.write(route.body)

        self._http = ThreadingHTTPServer((host, 0), Handler)
        self._http.daemon_threads = True
        self.scheme = "https" if tls is not None else "http"
        if tls is not None:
            self._http.socket = tls.wrap_socket(self._http.socket, server_side=True)
        self._thread = threading.Thread(target=self._http.serve_forever, name="web-pages", daemon=True)

    @property
    def base(self) -> str:
        host, port = self._http.server_address[:2]
        return f"{self.scheme}://{host}:{port}"

    def url(self, path: str) -> str:
        return self.base + path

    def page(
        self, path: str, body: str | bytes, content_type: str = "text/html; charset=utf-8", status: int = 200
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = _Route(status, {"Content-Type": content_type} if content_type else {}, data)

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.routes[path] = _Route(status, {"Location": location})

    def stall(self, path: str) -> None:
        self.routes[path] = _Route(stall=True)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        self._http.shutdown()
        self._http.server_close()


def big_page(chars: int, sentence: str) -> str:
    """An HTML page of about `chars` characters of paragraphs, with `sentence` in the middle."""
    rows = []
    size = 0
    n = 0
    while size < chars:
        row = f"<p>Paragraph {n}: the quick brown fox jumps over the lazy dog, again and again.</p>\n"
        rows.append(row)
        size += len(row)
        n += 1
    rows.insert(len(rows) // 2, f"<h2>Middle</h2>\n<p>{sentence}</p>\n")
    return (
        "<!doctype html><html><head><title>A big page</title></head><body>\n"
        + "".join(rows)
        + "</body></html>"
    )
