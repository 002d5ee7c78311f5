"""Running the fake server: in the foreground until a signal (``python -m evalq.fake_gemini``), or on a
background thread for a ``with`` block (tests, the client)."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Unpack

from aiohttp import web

from evalq.fake_gemini.options import ServerOptions, ServerOptionsArgs
from evalq.fake_gemini.protocol import Brain
from evalq.fake_gemini.server import create_app

logger = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def _serve(
    app: web.Application, host: str, port: int, stop: asyncio.Event, on_ready: Callable[[str], None]
) -> None:
    # access_log=None: aiohttp's access log prints the query string, which may hold ?key=.
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        on_ready(_url(host, runner.addresses[0][1]))
        await stop.wait()
    finally:
        await runner.cleanup()


def _announce(url: str) -> None:
    """The one stdout line a parent process reads to learn the (possibly random) port."""
    print(f"fake-gemini listening on {url} (simulated judge)", flush=True)


async def _serve_until_signalled(app: web.Application, host: str, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    await _serve(app, host, port, stop, _announce)


def serve_app(app: web.Application, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Serve until SIGINT/SIGTERM; port 0 picks a free port (printed on the ready line)."""
    asyncio.run(_serve_until_signalled(app, host, port))


def run_server(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    brain: Brain | None = None,
    **options: Unpack[ServerOptionsArgs],
) -> None:
    """Blocking entry point behind ``python -m evalq.fake_gemini``."""
    serve_app(create_app(brain, ServerOptions(**options)), host, port)


class _ServerThread(threading.Thread):
    """Runs the app on its own event loop, so sync code (tests, the client) can call it."""

    def __init__(self, app: web.Application, host: str, port: int) -> None:
        super().__init__(name="fake-gemini", daemon=True)
        self._app = app
        self._host = host
        self._port = port
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self.url: str | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # handed to the starting thread by wait_ready()
            self.error = exc
            if self.url is not None:
                logger.exception("fake-gemini at %s stopped unexpectedly", self.url)
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        await _serve(self._app, self._host, self._port, self._stop_event, self._on_ready)

    def _on_ready(self, url: str) -> None:
        self.url = url
        self._ready.set()

    def wait_ready(self, timeout_s: float = 10.0) -> str:
        if not self._ready.wait(timeout_s):
            raise TimeoutError("fake-gemini did not start in time")
        if self.url is None:
            if isinstance(self.error, Exception):
                raise self.error
            raise RuntimeError("fake-gemini failed to start") from self.error
        return self.url

    def shutdown(self, timeout_s: float = 10.0) -> None:
        if self._loop is not None and self._stop_event is not None and self.is_alive():
            self._loop.call_soon_threadsafe(self._stop_event.set)
        self.join(timeout_s)


@contextmanager
def running_server(
    *,
    brain: Brain | None = None,
    host: str = DEFAULT_HOST,
    port: int = 0,
    **options: Unpack[ServerOptionsArgs],
) -> Iterator[str]:
    """Serve in a background thread for the ``with`` block; yields the base URL."""
    app = create_app(brain, ServerOptions(**options))
    thread = _ServerThread(app, host, port)
    thread.start()
    try:
        yield thread.wait_ready()
    finally:
        thread.shutdown()
