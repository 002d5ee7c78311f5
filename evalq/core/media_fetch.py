"""Downloading a row's media from an http(s) URL: public addresses only, bounded in size and
in total time.

A URL in a dataset is fetched by a worker inside the deployment's network, so without a rule
one row could read a cloud metadata service, Redis, or any internal page and have it judged.
Every address a host name resolves to is checked before connecting, on every redirect too
(redirects are followed here, a bounded number of times), and the connection goes to the
address that was checked, so a second DNS answer can not swap it (DNS rebinding). Loopback,
private, link-local, multicast and reserved addresses are refused unless the deployment allows
private ones (EVALQ_MEDIA_ALLOW_PRIVATE, or networks in EVALQ_MEDIA_ALLOW_NETWORKS); cloud
metadata and link-local addresses are refused always.

Time: every socket operation has a timeout, and the whole download a deadline; at the deadline
the socket is shut down, so a server that drips one byte at a time, in the body or in the
headers, frees the worker thread then. A body shorter than its Content-Length is an error, not
an image.
"""

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

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

REFUSED = "refused address"
_REDIRECTS = (301, 302, 303, 307, 308)
_CHUNK = 64 * 1024
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

# Host names of cloud metadata services, refused before any lookup.
METADATA_HOSTS = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
# Their addresses (AWS, ECS, GCP, Azure, Oracle, Alibaba): refused even when private ones are
# allowed. Link-local ranges are refused as a whole as well.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "100.100.100.200",
        "fd00:ec2::254",
        "fd20:ce::254",
    )
)


@dataclass(frozen=True)
class NetworkRules:
    """Which addresses a job's URLs may reach beyond the public internet."""

    allow_private: bool = False
    allow_networks: tuple[str, ...] = ()  # CIDRs, e.g. ("10.1.2.0/24",)

    def refusal(self, address: IPAddress) -> str | None:
        """Why an address may not be fetched from, or None."""
        ip = _embedded_ipv4(address) or address
        if ip in METADATA_ADDRESSES or ip.is_link_local:
            return "a link-local or cloud metadata address"
        if ip.is_multicast or ip.is_unspecified:
            return "a multicast or unspecified address"
        if self.allow_private or any(
            ip in ipaddress.ip_network(net, strict=False) for net in self.allow_networks
        ):
            return None
        if ip.is_loopback:
            return "a loopback address"
        if ip.is_private:
            return "a private address"
        if not ip.is_global:
            return "not a public address"
        return None


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64): it is where packets go."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


@dataclass(frozen=True)
class Target:
    """One URL, taken apart."""

    url: str
    scheme: str
    host: str
    port: int
    path: str  # with the query


def parse_url(url: str, rules: NetworkRules, row_id: str, field: str) -> Target:
    """Check what can be checked without the network: the scheme, the host, a literal address.
    The producer calls this at submit; the worker again, then checks what the host resolves to."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InputError(row_id, field, f"{url} is not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise InputError(row_id, field, f"{url}: only http(s) URLs are fetched")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise InputError(row_id, field, f"{url} has no host")
    try:
        host = host.encode("idna").decode("ascii")  # the name DNS and Host: carry
    except UnicodeError:
        raise InputError(row_id, field, f"{url}: {host!r} is not a valid host name") from None
    if host in METADATA_HOSTS:
        raise InputError(row_id, field, f"GET {url}: {REFUSED}: {host} is a cloud metadata service")
    if (literal := _literal_address(host)) is not None:
        _check_address(url, host, literal, rules, row_id, field)
    path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    path = urllib.parse.quote(path, safe="!#$%&'()*+,/:;=?@[]~")  # spaces, non-ASCII: escaped
    return Target(url, scheme, host, port or (443 if scheme == "https" else 80), path)


def _literal_address(host: str) -> IPAddress | None:
    """The address a host written as one stands for, legacy IPv4 forms included (127.1,
    0x7f.0.0.1, 2130706433 all reach 127.0.0.1)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if host.replace(".", "").replace("x", "").isalnum():
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            pass
    return None


def _check_address(
    url: str, host: str, address: IPAddress, rules: NetworkRules, row_id: str, field: str
) -> None:
    if (why := rules.refusal(address)) is not None:
        hint = "" if "metadata" in why or "multicast" in why else " (EVALQ_MEDIA_ALLOW_PRIVATE)"
        raise InputError(row_id, field, f"GET {url}: {REFUSED}: {host} is {why}{hint}")


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
    """GET a URL's body, following redirects; raise InputError naming the row and field."""
    deadline = _Deadline(limits.deadline_s)
    current = url
    try:
        for _ in range(limits.max_redirects + 1):
            target = parse_url(current, rules, row_id, field)
            addresses = _resolve(target, deadline, row_id, field)
            for address in addresses:
                _check_address(current, target.host, address, rules, row_id, field)
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
    if (literal := _literal_address(target.host)) is not None:
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
    headers = {"User-Agent": "evalq", "Accept-Encoding": "identity", "Connection": "close"}
    conn.request("GET", target.path, headers=headers)
    with conn.getresponse() as response:
        return _body(conn, response, target, limits, deadline, row_id, field)


def _body(
    conn: _PinnedHTTP,
    response: http.client.HTTPResponse,
    target: Target,
    limits: FetchLimits,
    deadline: _Deadline,
    row_id: str,
    field: str,
) -> Fetched | str:
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
        raise InputError(row_id, field, f"{target.url} is over the {limits.max_bytes} byte limit")
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
