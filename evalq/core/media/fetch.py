"""Downloading a row's media from an http(s) URL: public addresses only, bounded in size and in
total time, since a worker fetches inside the deployment's network."""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from evalq.core.errors import InputError
from evalq.core.media.network import (
    IPAddress,
    NetworkRules,
    Target,
    check_address,
    literal_address,
    parse_url,
)

__all__ = ["FetchLimits", "Fetched", "NetworkRules", "fetch", "parse_url"]

_REDIRECTS = (301, 302, 303, 307, 308)
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int
    timeout_s: float  # one connect or read
    deadline_s: float  # the whole download, redirects included
    max_redirects: int = 5


@dataclass(frozen=True)
class Fetched:
    data: bytes
    content_type: str | None  # as the server declared it


class _Deadline:
    """The download's clock, and the timer that shuts its socket when it runs out."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.fired = False

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def expired(self) -> bool:
        return self.fired or self.remaining() <= 0

    def _fire(self, conn: _PinnedHTTP) -> None:
        self.fired = True
        conn.abort()

    @contextmanager
    def guard(self, conn: _PinnedHTTP) -> Iterator[None]:
        """Shut the connection's socket at the deadline, whatever call is blocked on it."""
        timer = threading.Timer(max(0.0, self.remaining()), self._fire, args=(conn,))
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            conn.close()


class _PinnedHTTP(http.client.HTTPConnection):
    """Connects to an address already checked, while Host (and TLS) name the URL's host."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address
        self.raw: socket.socket | None = None  # kept: http.client drops sock after a response
        self._lock = threading.Lock()
        self._closed = False

    def connect(self) -> None:
        self.sock = self.raw = socket.create_connection((self.address, self.port), self.timeout)

    def abort(self) -> None:
        """Wake any call blocked on the socket (from the deadline's timer thread)."""
        with self._lock:
            if self.raw is not None and not self._closed:
                with suppress(OSError):
                    self.raw.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with self._lock:  # after this the timer never touches the socket (its fd may be reused)
            self._closed = True
            super().close()


class _PinnedHTTPS(_PinnedHTTP):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, address, timeout)
        self.context = ssl.create_default_context()

    def connect(self) -> None:
        plain = socket.create_connection((self.address, self.port), self.timeout)
        self.raw = plain
        self.sock = self.context.wrap_socket(plain, server_hostname=self.host)


def fetch(url: str, rules: NetworkRules, limits: FetchLimits, row_id: str, field: str) -> Fetched:
    """GET a URL's body, following redirects; raise InputError naming the row and field. Every
    address a host resolves to is checked, on every redirect too, and the connection goes to
    the address checked, so a second DNS answer can't swap it (DNS rebinding). At the deadline
    the socket is shut down, so a server dripping bytes frees the worker thread; a body shorter
    than its Content-Length is an error."""
    deadline = _Deadline(limits.deadline_s)
    current = url
    try:
        for _ in range(limits.max_redirects + 1):
            target = parse_url(current, rules, row_id, field)
            addresses = _resolve(target, deadline, row_id, field)
            for address in addresses:
                check_address(current, target.host, address, rules, row_id, field)
            response = _get(target, addresses, limits, deadline, row_id, field)
            if isinstance(response, Fetched):
                return response
            current = urllib.parse.urljoin(current, response)
    except TimeoutError:
        if deadline.expired():
            raise _too_slow(url, limits, row_id, field) from None
        raise InputError(
            row_id, field, f"GET {url}: no answer for {limits.timeout_s:g} s"
        ) from None
    raise InputError(row_id, field, f"GET {url}: more than {limits.max_redirects} redirects")


def _too_slow(url: str, limits: FetchLimits, row_id: str, field: str) -> InputError:
    return InputError(
        row_id,
        field,
        f"GET {url}: not downloaded within the {limits.deadline_s:g} s deadline "
        "(EVALQ_MEDIA_FETCH_DEADLINE_S)",
    )


def _resolve(target: Target, deadline: _Deadline, row_id: str, field: str) -> list[IPAddress]:
    """Every address the host has; the lookup runs apart so the deadline bounds it too."""
    if (literal := literal_address(target.host)) is not None:
        return [literal]
    found: list[IPAddress] = []
    failure: list[OSError] = []
    done = threading.Event()

    def lookup() -> None:
        try:
            infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
            for info in infos:
                address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
                if address not in found:
                    found.append(address)
        except OSError as exc:
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=lookup, name="evalq-media-dns", daemon=True).start()
    if not done.wait(max(0.0, deadline.remaining())):
        raise TimeoutError
    if failure or not found:
        why = failure[0].strerror if failure and failure[0].strerror else "no address"
        raise InputError(
            row_id, field, f"GET {target.url} failed: cannot resolve {target.host}: {why}"
        )
    return found


def _get(
    target: Target,
    addresses: list[IPAddress],
    limits: FetchLimits,
    deadline: _Deadline,
    row_id: str,
    field: str,
) -> Fetched | str:
    """The body, or the Location of a redirect."""
    url = target.url
    last_error: OSError | None = None
    for address in addresses:
        if deadline.expired():
            raise TimeoutError
        kind = _PinnedHTTPS if target.scheme == "https" else _PinnedHTTP
        conn = kind(
            target.host, target.port, str(address), min(limits.timeout_s, deadline.remaining())
        )
        with deadline.guard(conn):
            try:
                conn.connect()
            except OSError as exc:
                if isinstance(exc, TimeoutError) or deadline.expired():
                    raise TimeoutError from None
                last_error = exc
                continue
            try:
                return _exchange(conn, target, limits, deadline, row_id, field)
            except (OSError, http.client.HTTPException) as exc:
                if isinstance(exc, TimeoutError) or deadline.expired():
                    raise TimeoutError from None
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise InputError(
                    row_id, field, f"GET {url} failed: {type(exc).__name__}: {why}"
                ) from None
    if deadline.expired():
        raise TimeoutError
    reason = last_error.strerror if last_error and last_error.strerror else last_error
    raise InputError(row_id, field, f"GET {url} failed: {reason}")


def _exchange(
    conn: _PinnedHTTP,
    target: Target,
    limits: FetchLimits,
    deadline: _Deadline,
    row_id: str,
    field: str,
) -> Fetched | str:
    """One GET on a connected socket: the body, or the Location of a redirect."""
    headers = {"User-Agent": "evalq", "Accept-Encoding": "identity", "Connection": "close"}
    conn.request("GET", target.path, headers=headers)
    with conn.getresponse() as response:
        if response.status in _REDIRECTS:
            location = response.getheader("Location")
            if not location:
                raise InputError(
                    row_id, field, f"GET {target.url}: HTTP {response.status} with no Location"
                )
            return location
        if not 200 <= response.status < 300:
            raise InputError(row_id, field, f"GET {target.url} answered HTTP {response.status}")
        declared = response.length  # Content-Length, or None (chunked, or until the server closes)
        if declared is not None and declared > limits.max_bytes:
            raise InputError(
                row_id, field, f"{target.url} is over the {limits.max_bytes} byte limit"
            )
        chunks: list[bytes] = []
        size = 0
        while True:
            if deadline.expired():
                raise TimeoutError
            if conn.raw is not None:
                conn.raw.settimeout(max(0.01, min(limits.timeout_s, deadline.remaining())))
            try:
                chunk = response.read1(_CHUNK)
            except http.client.IncompleteRead:
                raise _truncated(target.url, size, declared, row_id, field) from None
            if not chunk:
                break
            size += len(chunk)
            if size > limits.max_bytes:
                raise InputError(
                    row_id, field, f"{target.url} is over the {limits.max_bytes} byte limit"
                )
            chunks.append(chunk)
        if deadline.expired():
            raise TimeoutError  # the timer shut the socket: the end of the body is not the end
        if declared is not None and size < declared:
            raise _truncated(target.url, size, declared, row_id, field)
        content_type = (
            response.headers.get_content_type() if response.headers.get("Content-Type") else None
        )
        return Fetched(b"".join(chunks), content_type)


def _truncated(url: str, size: int, declared: int | None, row_id: str, field: str) -> InputError:
    of = f" of the {declared} its Content-Length announced" if declared is not None else ""
    return InputError(
        row_id, field, f"GET {url}: the body ended after {size} bytes{of} (truncated)"
    )
