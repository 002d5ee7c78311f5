"""Count evalq's Redis round trips with MONITOR on a real Redis, so a change that adds one to a
hot path fails a test (a count, never a time).

What counts as one round trip, read from MONITOR's stream of one database:
- a command on its own;
- a MULTI ... EXEC block (redis-py sends it in one write and reads one reply);
- a script (EVALSHA), whatever it runs inside (those lines come from "lua" and are skipped).

A non-transactional pipeline can not be told apart from separate commands in MONITOR, so it
counts as one round trip per command: the count errs high, never low. Connection set-up
(HELLO, SELECT, CLIENT SETINFO, AUTH) is left out: a worker keeps its connections, while the
in-process runner builds a fresh runtime, and so new connections, for every task.

The window is closed by a marker command sent on another connection and waited for in the
stream: no sleep decides when counting ends.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import redis

_SETUP = ("HELLO", "SELECT", "CLIENT SETINFO", "CLIENT SETNAME", "AUTH", "READONLY")


@dataclass
class Window:
    """What MONITOR saw on one database while the window was open."""

    commands: list[str] = field(default_factory=list)  # every command, lua's included
    round_trips: int = 0
    trips: list[list[str]] = field(default_factory=list)  # the commands of each round trip

    def __str__(self) -> str:
        return "\n".join(" | ".join(trip) for trip in self.trips)


def _count(lines: list[dict[str, Any]], db: int) -> Window:
    window = Window()
    open_blocks: dict[str, list[str]] = {}  # client -> commands of its MULTI so far
    for line in lines:
        if line["db"] != db:
            continue
        command = str(line["command"])
        window.commands.append(command)
        if line["client_type"] == "lua" or command.upper().startswith(_SETUP):
            continue
        client = f"{line['client_address']}:{line['client_port']}"
        verb = command.split(" ", 1)[0].upper()
        if verb == "MULTI":
            open_blocks[client] = [command]
        elif client in open_blocks:
            open_blocks[client].append(command)
            if verb in ("EXEC", "DISCARD"):
                window.trips.append(open_blocks.pop(client))
        else:
            window.trips.append([command])
    window.trips += list(open_blocks.values())
    window.round_trips = len(window.trips)
    return window


@contextmanager
def monitored(url: str) -> Iterator[Window]:
    """Count the round trips made to the database of `url` inside the `with` block; the
    Window is filled in when the block ends."""
    marker = f"evalq-round-trips-{uuid.uuid4().hex}"
    pool = redis.ConnectionPool.from_url(url, decode_responses=True)
    db = int(pool.connection_kwargs.get("db", 0))
    seen: list[dict[str, Any]] = []
    ready = threading.Event()
    failed: list[BaseException] = []

    def read(monitor: Any) -> None:
        try:
            ready.set()
            while True:
                line = monitor.next_command()
                if marker in str(line["command"]):
                    return
                seen.append(line)
        except BaseException as exc:  # reported by the test, not lost in the thread
            failed.append(exc)

    window = Window()
    with redis.Redis(connection_pool=pool).monitor() as monitor:  # on once this returns
        reader = threading.Thread(target=read, args=(monitor,), daemon=True)
        reader.start()
        ready.wait()
        try:
            yield window
        finally:
            redis.Redis.from_url(url).echo(marker)
            reader.join(timeout=60)
    if failed:
        raise failed[0]
    assert not reader.is_alive(), "MONITOR never showed the end marker"
    counted = _count(seen, db)
    window.commands, window.round_trips, window.trips = (
        counted.commands,
        counted.round_trips,
        counted.trips,
    )
