"""``python -m evalq.fake_gemini``: run the fake Gemini server until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from evalq.core.addresses import beyond_loopback
from evalq.fake_gemini.options import ServerOptions, check_suffix
from evalq.fake_gemini.realism import BatchRealism
from evalq.fake_gemini.script import ScriptError
from evalq.fake_gemini.server import create_app
from evalq.fake_gemini.serving import DEFAULT_HOST, DEFAULT_PORT, serve_app


def _fraction(value: str) -> float:
    rate = float(value)
    if not 0.0 <= rate <= 1.0:
        raise argparse.ArgumentTypeError(f"must be within 0..1, got {value}")
    return rate


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return number


def _non_negative(value: str) -> float:
    number = float(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return number


def _realism(value: str) -> BatchRealism:
    try:
        return BatchRealism.from_cli(value)
    except ValueError as exc:  # JSONDecodeError too
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _suffix(value: str) -> str:
    try:
        check_suffix(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evalq.fake_gemini",
        description="Fake Gemini REST server; every reply it writes is labelled simulated.",
        # `evalq fake-gemini --help` prints this parser's help: its examples end it, as every
        # evalq command's help ends (evalq.client.cli.help).
        epilog="Examples:\n  evalq fake-gemini --port 8765\n"
        "  evalq fake-gemini --port 8765 --latency-ms 200 --rpm 60 --fault-rate 0.05",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="0 picks a free port (see the ready line)"
    )
    parser.add_argument(
        "--latency-ms", type=_non_negative, default=0.0, help="delay before every reply"
    )
    parser.add_argument("--rpm", type=_positive, help="requests per minute per model, then 429")
    parser.add_argument("--rpd", type=_positive, help="requests per day per model, then 429")
    parser.add_argument(
        "--fault-rate", type=_fraction, default=0.0, help="probability of a random fault"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault generator")
    parser.add_argument("--script", help="JSONL file of script rules")
    parser.add_argument(
        "--slow-fault-ms", type=_non_negative, default=2000.0, help="extra delay of a slow fault"
    )
    parser.add_argument(
        "--quota-window-s",
        type=float,
        default=60.0,
        help="sliding window of the --rpm quota, scaled (tests: shorter than a minute)",
    )
    parser.add_argument(
        "--batch-delay-s",
        type=_non_negative,
        default=0.0,
        help="how long each batch stays PENDING, then RUNNING, before it is answered",
    )
    parser.add_argument(
        "--batch-realism",
        type=_realism,
        default=BatchRealism(),
        help="batch realism switches on from the start: 'reorder,no_metadata,late_output=3' "
        "or a JSON object (POST /batch-realism changes them)",
    )
    parser.add_argument(
        "--model-version-suffix",
        type=_suffix,
        default=None,
        metavar="X",
        help="the simulated judge answers as modelVersion "
        "evalq-fake-gemini/simulated-judge@X: another version of the same model "
        "(POST /model-version changes it)",
    )
    parser.add_argument("--log-level", default="WARNING", help="logging level (to stderr)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # Logs go to stderr: stdout carries only the ready line a parent process waits for.
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    if beyond_loopback(args.host):
        # stderr: stdout carries only the ready line.
        print(
            f"fake-gemini: warning: listening on {args.host}, beyond this host's loopback: anyone "
            "who can reach it can use it (no key is checked), change its faults, quotas and "
            "latency through its control routes, and read its stats.",
            file=sys.stderr,
            flush=True,
        )
    options = ServerOptions.from_args(args)
    try:
        app = create_app(options=options)
    except ScriptError as exc:
        parser.exit(2, f"fake-gemini: bad script: {exc}\n")
    except ImportError as exc:
        parser.exit(1, f"fake-gemini: the simulated judge cannot be loaded: {exc}\n")
    try:
        serve_app(app, args.host, args.port)
    except OSError as exc:
        parser.exit(1, f"fake-gemini: cannot listen on {args.host}:{args.port}: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
