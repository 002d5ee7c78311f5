"""`evalq worker`, `evalq metrics` and `evalq fake-gemini`: the long-running processes."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from evalq.client.cli.common import (
    apply_overrides,
    err_console,
    make_client,
    redis_option,
)
from evalq.client.cli.help import examples
from evalq.client.output.terminal.visible import shown, visible

if TYPE_CHECKING:
    from evalq.worker.settings import Settings


@click.command(
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    epilog=examples("evalq worker", "evalq worker --pool threads --concurrency 16"),
)
@click.option(
    "--pool",
    "-P",
    type=click.Choice(["gevent", "threads"]),
    default=None,
    help="gevent (hundreds of calls in flight per process) or threads (default: EVALQ_WORKER_POOL, gevent).",
)
@click.option(
    "--concurrency",
    "-c",
    type=int,
    default=None,
    help="Tasks at once (default: EVALQ_WORKER_CONCURRENCY, else 200 greenlets or 16 threads).",
)
@click.option("--loglevel", "-l", default="INFO", show_default=True)
@click.option("--hostname", "-n", default=None, help="Worker node name (default: evalq@HOST).")
@click.option(
    "--no-judge-check",
    "judge_check",
    flag_value=False,
    default=True,
    help="Start even with no judge it can reach (no key, Vertex AI settings or base URL that "
    "answers); every judge call then fails and is retried as usual.",
)
@redis_option
@click.pass_context
def worker(
    ctx: click.Context,
    pool: str | None,
    concurrency: int | None,
    loglevel: str,
    hostname: str | None,
    judge_check: bool,
    redis_url: str | None,
) -> None:
    """Start a worker (judge calls wait on the network, so greenlets or threads). Extra args go
    to Celery.

    First it checks it has a judge to ask (evalq.worker.judges.check): a base URL
    (EVALQ_GEMINI_BASE_URL) that answers, else on Vertex AI its project, location and
    application-default credentials, else a Gemini API key. Without one it does not start:
    exit 7, one line on stderr saying what is missing (--no-judge-check skips the check).

    The process becomes `celery worker` (exec, same pid): Celery's own entry monkey-patches for
    gevent before it imports anything that uses sockets, ssl or threads, which this process has
    already done. The pool and concurrency go on in the environment, so the worker's settings
    size its Redis and HTTP connection pools for them."""
    apply_overrides(redis_url)
    from evalq.worker.dispatch.queues import QUEUE_QUESTIONS, QUEUE_ROWS
    from evalq.worker.settings import SettingsError, get_settings

    try:
        settings = get_settings()
    except SettingsError as exc:  # a URL that does not parse: one line, its password masked
        from evalq.client.cli.exit_codes import NO_JUDGE

        click.echo(visible(f"evalq worker: {exc}"), err=True)
        sys.exit(NO_JUDGE)
    if judge_check:
        _refuse_without_a_judge(settings)
    pool = pool or settings.worker_pool
    concurrency = concurrency or settings.model_copy(update={"worker_pool": pool}).concurrency
    os.environ["EVALQ_WORKER_POOL"] = pool
    os.environ["EVALQ_WORKER_CONCURRENCY"] = str(concurrency)
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "evalq.worker.celery_app.app",
        "worker",
        f"--pool={pool}",
        f"--concurrency={concurrency}",
        f"--loglevel={loglevel}",
        "-Q",
        f"{QUEUE_QUESTIONS},{QUEUE_ROWS}",
        *(["-E"] if settings.task_events else []),  # events for Flower: EVALQ_TASK_EVENTS
        # Mingle (a second's wait at start for other workers' revoked ids and clocks) and
        # gossip (a consumer of other workers' events) serve Celery's revoke and election,
        # which evalq does not use: each worker's heartbeat (evalq.worker.dispatch.heartbeat) says
        # it is up.
        "--without-mingle",
        "--without-gossip",
        f"--hostname={hostname or 'evalq@%h'}",
        *ctx.args,
    ]
    _raise_open_files_limit()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, argv)


def _refuse_without_a_judge(settings: Settings) -> None:
    """Exit NO_JUDGE with evalq.worker.judges.check's one line when there is no judge to ask."""
    from evalq.client.cli.exit_codes import NO_JUDGE
    from evalq.worker.judges.check import judge_problem

    if (problem := judge_problem(settings)) is not None:
        click.echo(visible(problem), err=True)
        sys.exit(NO_JUDGE)


def _raise_open_files_limit() -> None:
    """Each task at once may hold a Redis and an HTTP connection: a pool of hundreds passes a
    soft limit of 1024 open files long before the hard limit, so the worker takes the hard one."""
    import contextlib
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max(soft, 65536) if hard == resource.RLIM_INFINITY else hard
    # Refused: the worker still starts; a huge pool may then run out of sockets.
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


@click.command(epilog=examples("evalq metrics --port 9808"))
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=9808, show_default=True, type=int)
@redis_option
def metrics(host: str, port: int, redis_url: str | None) -> None:
    """Serve job-level figures (rows done, score so far, 429s, limiter wait, tokens) for Prometheus."""
    from evalq.core.addresses import beyond_loopback

    if beyond_loopback(host):
        # The endpoint has no login: whoever reaches it reads the figures of every job.
        err_console().print(
            f"[yellow]warning:[/] the metrics endpoint binds {shown(host)}, beyond this host's loopback: "
            "anyone who can reach it reads every job id and its cost, rows and scores (no "
            "login). Keep it behind a firewall or an authenticating proxy, or use --host 127.0.0.1.",
            highlight=False,
        )
    make_client(redis_url).serve_metrics(host, port)


@click.command(
    "fake-gemini",
    context_settings={
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "help_option_names": [],
    },
    add_help_option=False,
)
@click.pass_context
def fake_gemini(ctx: click.Context) -> None:
    """Serve the fake Gemini API (simulated judge) for offline runs: --port --latency-ms --rpm
    --rpd --fault-rate --seed --script; --help for all."""
    # A program of its own (evalq/fake_gemini/), run in this process's place: the client side does
    # not import it, so an installed service never carries the fake inside its runtime.
    os.execv(sys.executable, [sys.executable, "-m", "evalq.fake_gemini", *ctx.args])
