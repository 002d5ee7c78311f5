"""Fair turns between jobs on shared workers.

A job's rows do not all go to the broker when it is submitted: they wait in the job's list in
Redis, and only rows holding a turn are in the broker or running. The number of turns is a
cluster-wide window (EVALQ_TURN_WINDOW; by default the shares of the workers alive now added
up, each worker sizing its own from the wait it measures (evalq.worker.dispatch.pace) and
registering it, so adding a host widens the window and a busy CPU narrows it). A
turn is free when a row holding one is counted (finish_row.lua ends it), and free turns are
handed out (take_turns.lua, one atomic step, so any number of producers and workers on any
hosts may ask at once) to the job of the best priority (high, normal, low) that has rows
waiting and room under its own max_in_flight; within a priority, to the job holding fewest, so
a small job submitted behind a large one gets the next turns that free up, and two large jobs
share the window evenly. A low priority job only gets turns no other job can take.

Who hands turns out: the producer at submit and resume, the task that ends a row (prepare_row
when every unit was answered from the cache, aggregate_row, a row failed), and every watchdog
sweep, which makes up for a hand-out that never happened (a task or producer killed between
a row's end and the next hand-out).

After crashes: a turn is handed out with a sign of life for its row, so a row whose message
is lost (a producer killed after the hand-out, before publishing) goes quiet and the watchdog
drives it again, as it does any stalled row; a row counted twice (a duplicate task) ends its
turn once. Turns held by a job that pauses or is cancelled stop counting against the window;
`evalq resume` puts every row not yet counted back in line. A job with no turns keys (batch
mode, which never goes through the rows queue) is not in the turns at all."""

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
    are the demand this process's pace (evalq.worker.dispatch.pace) grows its share on."""
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
