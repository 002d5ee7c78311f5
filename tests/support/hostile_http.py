"""Local HTTP servers that misbehave on purpose, as a careless or hostile media host would:
they drip bytes, cut bodies short, redirect elsewhere. Each is bounded: a dripping answer ends
by itself after ``max_s`` (closing the connection mid-body), and the server stops with its
context. They count what they served, so a test can tell what a worker asked for."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Body:
    data: bytes
    content_type: str = "application/octet-stream"


@dataclass(frozen=True)
class Redirect:
    location: str  # a URL, or a path on this server
    status: int = 302


@dataclass(frozen=True)
class Drip:
    """A 200 whose body (or, with in_headers, whose headers) arrive one byte per interval_s."""

    content_length: int = 10_000_000
    interval_s: float = 0.2
    max_s: float = 20.0
    in_headers: bool = False


@dataclass(frozen=True)
class Truncated:
    """A body that stops short of its Content-Length: the server closes the connection."""

    data: bytes
    content_length: int


Route = Body | Redirect | Drip | Truncated


@dataclass
class HostileServer:
    url: str
    routes: dict[str, Route]
    hits: Counter[str] = field(default_factory=Counter)
    open_now: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def served(self, path: str) -> int:
        with self.lock:
            return self.hits[path]


def _handler(state: HostileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            with state.lock:
                state.hits[path] += 1
                state.open_now += 1
            try:
                self._answer(state.routes.get(path))
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up: what a deadline is for
            finally:
                with state.lock:
                    state.open_now -= 1
                self.close_connection = True

        def _answer(self, route: Route | None) -> None:
            if route is None:
                self.send_error(404)
            elif isinstance(route, Body):
                self.send_response(200)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(route.data)))
                self.end_headers()
                self.wfile.write(route.data)
            elif isinstance(route, Redirect):
                self.send_response(route.status)
                self.send_header("Location", route.location)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif isinstance(route, Truncated):
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(route.content_length))
                self.end_headers()
                self.wfile.write(route.data)
                self.wfile.flush()
            else:
                self._drip(route)

        def _drip(self, drip: Drip) -> None:
            end = time.monotonic() + drip.max_s
            if drip.in_headers:
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                chunk = b"X-Slow: " + b"a" * 10_000
            else:
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(drip.content_length))
                self.end_headers()
                chunk = b"\x89PNG\r\n\x1a\n" + bytes(drip.content_length)
            self.wfile.flush()
            for byte in chunk:
                if time.monotonic() > end:
                    return  # bounded: the connection closes with the body cut short
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(drip.interval_s)  # the fault itself: a body that drips

    return Handler


@contextmanager
def hostile_server(routes: dict[str, Route], host: str = "127.0.0.1") -> Iterator[HostileServer]:
    """Serve ``routes`` (path -> behaviour) on host, on a free port, until the context ends."""
    state = HostileServer(url="", routes=routes)
    server = ThreadingHTTPServer((host, 0), _handler(state))
    server.daemon_threads = True
    state.url = f"http://{host}:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
