"""Nothing from a dataset or a judge reaches the terminal raw: a dataset holding escape sequences
goes through every command a user would run on it, on the real stack (Redis, a worker, the fake
judge), and what the commands print shows them escaped (`\\x1b`), as `evalq status` does.

The sequences (a retitle, a screen clear, a C1 CSI, a right-to-left override) sit everywhere a
user's data is printed: row ids, file name, column names (an extra column, a --candidates column,
a --group-by column), group values and responses. Twice: with stdout and stderr piped (rich and
click style nothing off a terminal, so any ESC in the bytes came from the data), and on a
pseudo-terminal as a person sees it (there rich and click colour their own words and draw the
progress bar: those sequences, and only those, are taken out before looking). `evalq results`
keeps the data exact when piped (a CSV cell is the dataset's value) and shows it escaped on a
terminal; its JSON Lines escape the characters as JSON does (`\\u001b`, `\\u202e`), the same
values either way."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from devtools.local import ROOT
from tests.conftest import EVALQ, FakeGemini, RedisServer, worker_env
from tests.support.cli import TIMEOUT_S, run_evalq_bytes
from tests.support.datasets import write_rows

pytestmark = pytest.mark.integration

# A retitle (OSC 0, ended by BEL), a screen clear, the same clear with the one-byte C1 CSI,
# and a right-to-left override that would reorder what follows it.
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b2J\u202e"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")
SHOWN = "\\x1b]0;owned\\x07\\x1b[2J\\x9b2J\\u202e"  # how evalq shows it
ALT = f"alt{HOSTILE}"  # the second candidate's column
GROUP = f"cat{HOSTILE}"  # the --group-by column
NOTE = f"note{HOSTILE}"  # an extra column, named in run's warning

# What rich and click send of their own on a terminal: colours and bold (SGR), the progress
# bar's cursor hiding, line erasing and moving up. Nothing else may hold an ESC.
OWN_STYLING = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[2K|\x1b\[[0-9]*A")


def hostile_dataset(folder: Path) -> Path:
    """Pointwise rows, two candidates each, grouped by a column; one row refused at load
    (its response is not text), so run names its id in an input error."""
    rows: list[dict[str, Any]] = [
        {
            "id": f"r{i}{HOSTILE}",
            "response": f"A clear and fluent answer number {i}.{HOSTILE}",
            ALT: f"Another answer {i}, also {HOSTILE} fluent.",
            GROUP: f"v{i % 2}{HOSTILE}",
            NOTE: "kept",
        }
        for i in range(4)
    ]
    rows.append({"id": f"bad{HOSTILE}", "response": {"nested": 1}, ALT: "x", GROUP: "v0"})
    return write_rows(folder / f"rows{HOSTILE}.jsonl", rows)


def user_env(redis_url: str, fake_url: str) -> dict[str, str]:
    """The stack's environment with nothing forcing colour or a terminal on: what a piped
    command sees."""
    env = worker_env(redis_url, fake_url, COLUMNS="200")
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR", "TERM"):
        env.pop(name, None)
    return env


def raw_in(text: str) -> list[str]:
    return [repr(c) for c in RAW if c in text]


def on_terminal(env: Mapping[str, str], *args: str) -> tuple[int, str]:
    """`evalq ARGS…` on a pseudo-terminal 200 columns wide (stdout and stderr both), as a
    person runs it: its exit code and everything it wrote, decoded."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    proc = subprocess.Popen(
        [*EVALQ, *args],
        cwd=ROOT,
        env={**env, "TERM": "xterm-256color"},
        stdin=follower,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
    )
    os.close(follower)
    out = bytearray()
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    return code, out.decode("utf-8")


def unstyled(text: str) -> str:
    return OWN_STYLING.sub("", text)


def test_nothing_from_a_hostile_dataset_reaches_the_terminal_raw(
    client: Any, fake: FakeGemini, redis_server: RedisServer, tmp_path: Path
) -> None:
    env = user_env(redis_server.url, fake.url)
    data = hostile_dataset(tmp_path)
    name = f"hostile {uuid.uuid4().hex[:8]}"
    job_args = [
        "run", "pointwise", str(data), "--template", "fluency", "--candidates",
        f"response,{ALT}", "--group-by", GROUP, "--name", name,
    ]  # fmt: skip
    raw: list[str] = []  # every command that printed something raw, said at the end

    def piped(*args: str, code: int = 0, stdout: bool = False) -> str:
        """What the command printed (stdout alone if asked), each stream checked."""
        done = run_evalq_bytes(env, *args)
        out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
        label = ascii(" ".join(args[:3]))  # a failure's message sends nothing raw either
        assert done.returncode == code, f"{label}: exit {done.returncode}\n{out!r}\n{err!r}"
        for where, text in (("stdout", out), ("stderr", err)):
            if found := raw_in(text):
                raw.append(f"{label}: {', '.join(found)} on {where}:\n{text!r}")
        return out if stdout else out + err

    dry = piped(*job_args, "--dry-run")
    assert SHOWN in dry  # the dataset's file name and the refused row, shown escaped
    ran = piped(*job_args, "--wait")
    assert f"bad{SHOWN}" in ran  # the input error names the row
    assert f"note{SHOWN}" in ran  # the warning names the extra column
    piped("wait", name)
    piped("status", name)
    assert f"cat{SHOWN}=v0{SHOWN}" in piped("status", name, "--group-by", GROUP)
    assert SHOWN in piped("jobs", "--name", name)
    # JSON spells them as JSON escapes: the values are the dataset's, exactly.
    summary = json.loads(piped("status", name, "--group-by", GROUP, "--json", stdout=True))
    assert set(summary["candidates"]) == {"response", ALT}
    assert {g["column"] for g in summary["groups"]} == {GROUP}
    assert json.loads(piped("jobs", "--name", name, "--json", stdout=True))[0]["dataset"] == str(
        data
    )
    plan = json.loads(piped(*job_args, "--dry-run", "--json", stdout=True))
    assert plan["dataset"] == str(data)
    jsonl = piped("results", name, stdout=True).splitlines()
    assert {json.loads(line)["id"] for line in jsonl} == {f"r{i}{HOSTILE}" for i in range(4)} | {
        f"bad{HOSTILE}"
    }
    assert all(json.loads(line)["extra"].keys() <= {GROUP, NOTE} for line in jsonl)
    compared = piped("compare", name, "--group-by", GROUP, "--html", str(tmp_path / "c.html"))
    assert f"A = response, B = {ALT.replace(HOSTILE, SHOWN)}" in compared
    piped("compare", name)
    assert f"{ALT.replace(HOSTILE, SHOWN)}" in piped("leaderboard", name)
    board = piped("leaderboard", name, "--group-by", GROUP)
    assert f"cat{SHOWN}=v1{SHOWN}" in board
    report = tmp_path / f"report{HOSTILE}.html"
    assert f"report{SHOWN}.html" in piped("report", name, "--html", str(report))
    # HTML escapes its own characters; a control character in a page drives no terminal.
    assert f"r0{HOSTILE}" in report.read_text(encoding="utf-8")
    # Refusals quote what they refuse, escaped too: a job that is nowhere, a column no row has.
    assert f"nosuch{SHOWN}" in piped("status", f"nosuch{HOSTILE}", code=2)
    assert f"missing{SHOWN}" in piped(*job_args[:-2], "--group-by", f"missing{HOSTILE}", code=2)

    # Piped, a CSV is the data as it is: the id is the dataset's, byte for byte (click's echo
    # once took the screen clear out of it, leaving the rest).
    exact = run_evalq_bytes(env, "results", name, "--format", "csv")
    assert exact.returncode == 0
    table = list(csv.DictReader(io.StringIO(exact.stdout.decode("utf-8"))))
    assert f"r0{HOSTILE}" in {row["id"] for row in table}
    saved = tmp_path / "results.jsonl"
    piped("results", name, "--out", str(saved))
    assert not raw_in(saved.read_text(encoding="utf-8"))
    assert [json.loads(line)["id"] for line in saved.read_text().splitlines()] == [
        json.loads(line)["id"] for line in jsonl
    ]

    # On a terminal, as a person sees it.
    for args in (
        [*job_args, "--dry-run"],
        ["status", name, "--group-by", GROUP],
        ["wait", name],
        ["jobs", "--name", name],
        ["results", name],
        ["results", name, "--format", "csv"],
        ["compare", name, "--group-by", GROUP],
        ["leaderboard", name, "--group-by", GROUP],
        ["report", name, "--html", str(report)],
    ):
        code, text = on_terminal(env, *args)
        assert code == 0, f"{args[:3]!a}: exit {code}\n{text!r}"
        if found := raw_in(unstyled(text)):
            raw.append(f"on a terminal, {' '.join(args[:3])!a}: {', '.join(found)}:\n{text!r}")
    assert not raw, f"{len(raw)} printed raw:\n" + "\n".join(raw)
    code, text = on_terminal(env, "results", name, "--format", "csv")
    assert f"r0{SHOWN}" in text  # shown, not sent
    # The whole run with its progress bar, under a name of its own (the first stays unique).
    code, text = on_terminal(env, *job_args[:-1], f"{name} again", "--wait")
    assert code == 0 and f"bad{SHOWN}" in unstyled(text), ascii(text)
    assert not raw_in(unstyled(text)), ascii(text)
