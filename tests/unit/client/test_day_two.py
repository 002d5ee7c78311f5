"""Day-two use of the client: names on jobs, `evalq jobs` at 80 columns, --fail-under, the API's
option keywords, progress lines and what a resume says it did. The parts that need workers are in
tests/integration/cli/test_day_two.py."""

from __future__ import annotations

from collections import Counter
from pathlib import Path, PurePath
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from evalq.client.api import evaluate, progress_printer, split_keywords
from evalq.client.cli import main
from evalq.client.fail_under import under
from evalq.client.jobs.lookup import check_name
from evalq.client.output.terminal.tables import jobs_table
from evalq.core.errors import DatasetError
from evalq.core.models import CandidateSummary, GroupSummary, JobSummary
from evalq.worker.jobs.control import ResumeOutcome
from tests.support.summaries import job_summary


def day_two_summary(**overrides: Any) -> JobSummary:
    base = {"job_id": "3f2a9c1b7d0e", "mean_score": 0.75, "prompt_tokens": 1, "output_tokens": 1}
    return job_summary(40, **(base | overrides))


# ---- --name ----


def test_a_name_is_one_printable_line_of_at_most_100_characters() -> None:
    assert check_name(None) is None
    assert check_name("support replies, try 2 (é)") == "support replies, try 2 (é)"
    assert check_name("x" * 100) == "x" * 100
    with pytest.raises(DatasetError, match="at most 100 characters, got 101"):
        check_name("x" * 101)
    with pytest.raises(DatasetError, match=r"printable.*'\\n' at position 3"):
        check_name("two\nlines")
    with pytest.raises(DatasetError, match="empty"):
        check_name("  ")


def test_a_name_that_reads_as_a_job_id_or_an_id_prefix_is_refused() -> None:
    """A job named like another job's id (or the start of one) would stand for it wherever a
    job is named; job_refs reads 4 to 12 lower-case hex digits as an id."""
    for name in ("3f2a9c1b7d0e", "3f2a", "deadbeef", "0123456789a"):
        with pytest.raises(DatasetError, match=rf"^name: '{name}' is 4 to 12 hex digits"):
            check_name(name)
    for name in ("abc", "3f2a9c1b7d0e1", "DEADBEEF", "run-3f2a", "baseline"):
        assert check_name(name) == name  # too short, too long, upper case: never an id


def test_run_refuses_a_bad_name_naming_the_flag(tmp_path: Any) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "response": "r"}\n')
    result = CliRunner().invoke(
        main, ["run", "pointwise", str(data), "--name", "a\tb", "--redis-url", "redis://x:1/0"]
    )
    assert result.exit_code == 2
    assert "--name" in result.output and "printable" in result.output


# ---- evalq jobs ----


def test_jobs_table_fits_80_columns_and_cuts_no_word() -> None:
    long_name = "baseline against the tuned summaries second try with the longer template"
    jobs = [
        day_two_summary(
            name=long_name,
            dataset="/home/me/data/customer_support_conversations_2026_q3.csv",
            created_at=1_764_000_000.0,
            metric="groundedness",
            status="cancelled",
            rows_total=10_000,
            rows_done=9_999,
            mean_score=0.123456,
            simulated=True,
            owner="alice",
        ),
        day_two_summary(job_id="aaaaaaaaaaaa", name="x" * 100, dataset="/d/" + "y" * 90 + ".jsonl"),
        day_two_summary(job_id="bbbbbbbbbbbb", created_at=None, mean_score=None),
    ]
    console = Console(width=80, record=True, color_system=None)
    console.print(jobs_table(jobs))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert text.count("…") == 1  # the one word longer than the name column: never cut mid-word
    import time

    date = time.strftime("%Y-%m-%d %H:%M", time.localtime(1_764_000_000.0))
    for shown in ("3f2a9c1b7d0e", date, "groundedness", "cancelled", "9999/10000", "0.123"):
        assert shown in text, shown
    assert "n/a" in text and "simulated" in text
    # Names wrap between words (a word longer than the column ends in "…": "x" * 100 here);
    # file names fold inside their cells: every character of every other cell is shown.
    assert f"{'x' * 10}…" in text
    cells = [
        c
        for s in jobs
        for c in (
            s.job_id,
            "-" if s.name in (None, "x" * 100) else s.name,
            PurePath(s.dataset).name or "-",
        )
    ]
    body = [line for line in text.splitlines() if "─" not in line]
    shown_chars = Counter("".join(body).replace(" ", ""))
    assert all(shown_chars[c] >= n for c, n in Counter("".join(cells).replace(" ", "")).items())
    first = next(i for i, line in enumerate(body) if line.startswith("3f2a9c1b7d0e"))
    second = next(i for i, line in enumerate(body) if line.startswith("aaaaaaaaaaaa"))
    name_column = [line[: body[0].index("dataset")].strip() for line in body[first + 1 : second]]
    assert " ".join(name_column).strip() == long_name
    # Who submitted each job, under its metric; "-" for a job stored before owners were kept.
    assert body[first + 1].split()[-2:] == ["alice", "simulated"]
    assert body[second + 1].split()[-1] == "-"


# ---- --fail-under ----


def test_fail_under_holds_the_job_mean() -> None:
    assert under(day_two_summary(mean_score=0.75), 0.7) == []
    assert under(day_two_summary(mean_score=0.75), 0.8) == ["job mean: mean 0.750 is under 0.8"]
    assert under(day_two_summary(mean_score=None), 0.0) == [
        "job mean: no scored rows (fail-under 0)"
    ]


def test_fail_under_holds_each_candidate_and_each_group() -> None:
    def cand(mean: float | None) -> CandidateSummary:
        return CandidateSummary(
            rows=2, rows_scored=2, rows_partial=0, rows_failed=0, mean_score=mean, ci95=None
        )

    def group(value: str, mean: float | None, candidate: str | None = None) -> GroupSummary:
        return GroupSummary(
            column="category",
            value=value,
            candidate=candidate,
            rows=2,
            rows_scored=2 if mean is not None else 0,
            mean_score=mean,
            ci95=None,
        )

    pooled = day_two_summary(
        mean_score=0.9,  # pooled over both: high, but one candidate is under
        candidates={"tuned": cand(0.95), "base": cand(0.5)},
        groups=[group("billing", 0.9, "tuned"), group("refunds", None, "base")],
    )
    assert under(pooled, 0.6) == [
        "candidate base: mean 0.500 is under 0.6",
        "group category=refunds (candidate base): no scored rows (fail-under 0.6)",
    ]
    grouped = day_two_summary(mean_score=0.8, groups=[group("billing", 0.9), group("refunds", 0.4)])
    assert under(grouped, 0.5) == ["group category=refunds: mean 0.400 is under 0.5"]


# ---- the API's keywords and progress ----


def test_metric_options_are_keywords_from_the_options_model() -> None:
    own, options = split_keywords(
        "pointwise", {"template": "fluency", "samples": 3, "name": "n", "priority": "high"}
    )
    assert options == {"template": "fluency", "samples": 3}
    assert own == {"name": "n", "priority": "high"}
    own, options = split_keywords("gecko-image", {"validator": "batched", "candidates": ["a"]})
    assert options == {"validator": "batched", "candidates": ["a"]}


def test_unknown_keywords_and_options_given_twice_are_refused() -> None:
    with pytest.raises(TypeError, match=r"samplez.*options of 'pointwise' are: .*samples"):
        evaluate("nowhere.jsonl", "pointwise", samplez=3)
    with pytest.raises(TypeError, match="validator"):  # gecko's option, not pointwise's
        evaluate("nowhere.jsonl", "pointwise", validator="batched")
    with pytest.raises(TypeError, match="samples given both"):
        evaluate("nowhere.jsonl", "pointwise", samples=3, options={"samples": 2})


def test_progress_prints_whole_lines_once_per_change(capsys: pytest.CaptureFixture[str]) -> None:
    show = progress_printer("3f2a9c1b7d0e")
    for done in (0, 0, 12, 12, 40):
        show(done, 40)
    out = capsys.readouterr().out
    assert "\r" not in out
    assert out == "3f2a9c1b7d0e: 0/40 rows\n3f2a9c1b7d0e: 12/40 rows\n3f2a9c1b7d0e: 40/40 rows\n"


# ---- resume ----


def test_a_resume_says_what_it_re_sent() -> None:
    running = ResumeOutcome("j", "running", requeued=2, lost=2, left=38)
    assert running.describe() == (
        "job j is running: 38 rows in flight or waiting left as they are, "
        "2 rows that were lost (neither in flight nor waiting) re-sent"
    )
    quiet = ResumeOutcome("j", "running", left=40).describe()
    assert "40 rows in flight or waiting left as they are, 0 rows re-sent" in quiet
    assert (
        ResumeOutcome("j", "paused", requeued=40).describe()
        == "job j was paused: 40 rows back in line"
    )
    finished = ResumeOutcome("j", "finished", finished=True)
    assert finished.describe() == "job j is finished: nothing to resume"
    every_row_done = ResumeOutcome("j", "paused", finished=True).describe()
    assert every_row_done == "job j was paused with every row done: finished now, nothing to resume"


def test_jobs_on_an_empty_redis_says_so(scratch_url: str, tmp_path: Path) -> None:
    from evalq.client.cli import main

    empty = ["--redis-url", scratch_url, "--archive-url", f"sqlite:///{tmp_path / 'a.sqlite'}"]
    result = CliRunner().invoke(main, ["jobs", *empty])
    assert result.exit_code == 0, result.output
    assert "no jobs in this Redis or the archive" in result.output
    listed = CliRunner().invoke(main, ["jobs", "--json", *empty])
    assert listed.output.strip() == "[]"
