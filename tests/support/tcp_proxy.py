"""A small TCP proxy for the failover tests: what a managed Redis endpoint is to its clients.

Clients connect to the proxy; it forwards to one backend. `switch` points it at another
backend and closes every open connection, as an endpoint does when it fails over to a promoted
replica. `hold` stops forwarding (bytes wait in the kernel's buffers, unread), so a replica
replicating through a proxy falls behind its master while the master goes on taking writes;
`close_all` then drops what was held."""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from types import TracebackType


class TcpProxy:
    def __init__(self, backend_port: int, host: str = "127.0.0.1") -> None:
        self.host = host
        self.backend_port = backend_port
        self._listener = socket.create_server((host, 0))
        self.port = int(self._listener.getsockname()[1])
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._forwarding = threading.Event()
        self._forwarding.set()
        self._closed = threading.Event()
        threading.Thread(target=self._accept, name="tcp-proxy", daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def hold(self) -> None:
        """Stop forwarding: what either side sends waits, unread."""
        self._forwarding.clear()

    def switch(self, backend_port: int) -> None:
        """New connections go to `backend_port`; every open one is closed."""
        with self._lock:
            self.backend_port = backend_port
        self.close_all()
        self._forwarding.set()

    def close_all(self) -> None:
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for sock in pair:
                _close(sock)

    def close(self) -> None:
        self._closed.set()
        _close(self._listener)
        self.close_all()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            backend = self.backend_port
            try:
                upstream = socket.create_connection((self.host, backend))
            except OSError:
                _close(client)
                continue
            with self._lock:
                # A switch while this one connected: it would go on reaching the old backend.
                if backend != self.backend_port:
                    _close(client)
                    _close(upstream)
                    continue
                self._pairs.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        """Both directions of one connection, until either side closes."""
        peers = {a: b, b: a}
        try:
            while not self._closed.is_set():
                if not self._forwarding.wait(0.1):
                    if a.fileno() < 0 or b.fileno() < 0:
                        return
                    continue
                ready, _, _ = select.select([a, b], [], [], 0.1)
                for sock in ready:
                    if not self._forwarding.is_set():
                        break
                    data = sock.recv(65536)
                    if not data:
                        return
                    peers[sock].sendall(data)
        except (OSError, ValueError):
            return
        finally:
            _close(a)
            _close(b)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
