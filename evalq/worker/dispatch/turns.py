"""Fair turns between jobs on shared workers: only rows holding a turn are in the broker or
running, the rest wait in Redis; docs/concepts/turns.md says who gets the next turn and how
wide the window is."""

from __future__ import annotations

import logging
from collections.abc import Callable

from evalq.worker.dispatch.pace import demand
from evalq.worker.settings import Settings
from evalq.worker.store import Granted, Store

log = logging.getLogger(__name__)
SendRow = Callable[[str, str], None]


def hand_out(store: Store, settings: Settings, send: SendRow) -> Granted:
    """Give every free turn to a waiting row and send its prepare_row task; rows left waiting
    are the demand this process's pace (evalq.worker.dispatch.pace) grows its share on. Called
    by the producer at submit and resume, the task that ends a row, the pace when no row ended
    lately, and every watchdog sweep, which makes up for a hand-out a killed task never made.
    A row is handed out with a sign of life, so one whose message is lost goes quiet and the
    watchdog drives it again."""
    granted = store.take_turns(window=settings.turn_window, least=settings.turn_window_min)
    demand.saw(granted.waiting)
    for job_id, line in granted.rows:
        send(job_id, line)
    if granted.rows:
        log.debug("turns: %d handed out (window %d)", len(granted.rows), granted.window)
    return granted


def register(store: Store, worker: str, rows: int, lapse_s: float) -> None:
    """Count a worker alive, with its share of the window, until `lapse_s` from now (renewed by
    its heartbeat; a worker that dies stops counting once it lapses)."""
    store.register_share(worker, max(1, rows), lapse_s)
