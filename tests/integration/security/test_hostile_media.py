"""Hostile media end to end, on an isolated stack (its own Redis, fake Gemini, a real worker):
a dataset that points at local secrets or internal URLs gets those rows failed, and not one
byte of them reaches the judge, whether the producer stops them or, when it lets them through,
the worker does; a download that drips ends at its deadline without a second copy being
started, and another job is judged all the same."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools.local import wait_for
from evalq.examples.gecko import GECKO_IMAGE_EXAMPLES, draw_example
from tests.support.datasets import write_rows
from tests.support.hostile_http import Body, Drip, Redirect, Truncated, hostile_server
from tests.support.stack import Stack, stack

pytestmark = pytest.mark.integration

FETCH_DEADLINE_S = 8
SECRETS = "root:x:0:0|DEPLOY-TOKEN-7d2e|VmRSS|Uid:"
OUTSIDE = "outside the allowed data roots"
PUBLIC = ("127.0.0.2/32",)  # where the tests' stand-in for a public media host listens
EXAMPLE = GECKO_IMAGE_EXAMPLES[0]


def example_png(size: int = 128) -> bytes:
    buffer = io.BytesIO()
    draw_example(EXAMPLE, size_px=size).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, Path]]:
    """A worker that reads local media only under data/, fetches only public addresses (and
    127.0.0.2, the test's stand-in for a public media host), gives a download 8 s, and calls a
    row stalled after 4 s without a sign of life."""
    folder = tmp_path_factory.mktemp("hostile")
    data = folder / "data"
    data.mkdir()
    with stack(
        folder,
        concurrency=3,
        EVALQ_DATA_ROOTS=str(data),
        EVALQ_MEDIA_ALLOW_NETWORKS=",".join(PUBLIC),
        EVALQ_MEDIA_FETCH_DEADLINE_S=str(FETCH_DEADLINE_S),
        EVALQ_STALL_TIMEOUT_S="4",
        EVALQ_WATCHDOG_INTERVAL_S="0.5",
    ) as s:
        yield s, data


def secrets_sent(s: Stack) -> int:
    """How many judge requests carried any of the secrets (the script's rule 0 matches them)."""
    return int(s.stats()["script_rules_fired"].get("0", 0))


def test_local_secrets_are_never_read_nor_sent(guarded: tuple[Stack, Path]) -> None:
    s, data = guarded
    (data.parent / "deploy-token.txt").write_text("DEPLOY-TOKEN-7d2e\n")
    (data / "innocent.txt").symlink_to(data.parent / "deploy-token.txt")
    (data / "bees.txt").write_text("Honeybees live in colonies with one queen and many workers.")
    s.post("/script", [{"match": SECRETS, "reply": '{"explanation": "leaked", "rating": 5}'}])
    hostile = {
        "etc-passwd": "/etc/passwd",
        "proc-status": "/proc/self/status",
        "dot-dot": "../deploy-token.txt",
        "symlink-out": "innocent.txt",
        "content-form-shadow": {
            "file_data": {"file_uri": "/etc/shadow", "mime_type": "text/plain"}
        },
    }
    rows = [
        {
            "id": "good",
            "prompt": "Summarise.",
            "response": "Bees have a queen.",
            "document": "bees.txt",
        }
    ]
    rows += [
        {"id": row_id, "prompt": "Summarise.", "response": "A summary.", "document": document}
        for row_id, document in hostile.items()
    ]
    dataset = write_rows(data / "rows.jsonl", rows)
    client = s.client()
    # The producer refuses them at submit; told that "/" is a data root, it lets them through
    # and the worker, whose EVALQ_DATA_ROOTS is data/, refuses them when it reads.
    at_submit = client.submit(
        "pointwise",
        dataset,
        judge_model="judge-secrets",
        options={"template": "summarization_quality"},
    )
    assert {err.row_id for _, err in at_submit.dataset.errors} == set(hostile)
    let_through = client.submit(
        "pointwise",
        dataset,
        judge_model="judge-secrets",
        options={"template": "summarization_quality"},
        data_roots=["/"],
    )
    assert not let_through.dataset.errors
    for job in (at_submit, let_through):
        summary = client.wait(job.job_id, timeout_s=120)
        results = {r.id: r for r in client.results(job.job_id)}
        assert results["good"].status == "scored", results["good"].error
        for row_id in hostile:
            row = results[row_id]
            assert (row.status, row.reason) == ("failed", "input_error"), (row_id, row.error)
            assert OUTSIDE in (row.error or ""), row.error
            assert f"row {row_id}" in (row.error or "") and "'document'" in (row.error or "")
        assert summary.rows_failed_by_reason == {"input_error": len(hostile)}
    assert s.stats()["by_model"]["judge-secrets"] >= 2  # the good rows were judged
    assert secrets_sent(s) == 0


def test_internal_urls_are_never_fetched(guarded: tuple[Stack, Path]) -> None:
    s, data = guarded
    (data / "a.png").write_bytes(example_png())
    garbage = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"garbage" * 20).decode()
    with (
        hostile_server({"/secret.png": Body(example_png())}) as inside,
        hostile_server({"/good.png": Body(example_png(), "image/png")}, host="127.0.0.2") as public,
    ):
        port = inside.url.rsplit(":", 1)[1]
        public.routes["/to-loopback"] = Redirect(inside.url + "/secret.png")
        hostile = {
            "loopback": (inside.url + "/secret.png", "refused address"),
            "localhost": (f"http://localhost:{port}/secret.png", "refused address"),
            "redirect-to-loopback": (public.url + "/to-loopback", "refused address"),
            "redis": (f"http://127.0.0.1:{s.redis.port}/", "refused address"),
            "metadata": ("http://169.254.169.254/latest/meta-data/", "refused address"),
            "not-http": ("file:///etc/passwd", "only http(s)"),
            "png-then-garbage": (f"data:image/png;base64,{garbage}", "does not decode"),
        }
        rows = [
            {"id": "good-url", "prompt": EXAMPLE.match, "image": public.url + "/good.png"},
            {"id": "good-file", "prompt": EXAMPLE.match, "image": "a.png"},
        ]
        rows += [
            {"id": row_id, "prompt": EXAMPLE.match, "image": url}
            for row_id, (url, _) in hostile.items()
        ]
        dataset = write_rows(data / "urls.jsonl", rows)
        strict = s.client(media_allow_networks=PUBLIC).submit(
            "gecko-image", dataset, judge_model="judge-urls"
        )
        # A producer that allows private addresses lets them through; the worker does not.
        careless = s.client(media_allow_private=True).submit(
            "gecko-image", dataset, judge_model="judge-urls"
        )
        client = s.client()
        for job in (strict, careless):
            summary = client.wait(job.job_id, timeout_s=120)
            results = {r.id: r for r in client.results(job.job_id)}
            for row_id in ("good-url", "good-file"):
                assert results[row_id].status == "scored", (row_id, results[row_id].error)
            for row_id, (_, why) in hostile.items():
                row = results[row_id]
                assert (row.status, row.reason) == ("failed", "input_error"), (row_id, row.error)
                assert why in (row.error or ""), (row_id, row.error)
                assert f"row {row_id}" in (row.error or "") and "'image'" in (row.error or "")
            assert summary.rows_failed_by_reason == {"input_error": len(hostile)}
        assert public.served("/to-loopback") == 2  # once per job: the redirect is checked
        assert inside.served("/secret.png") == 0


def test_a_dripping_download_ends_at_its_deadline_and_other_jobs_go_on(
    guarded: tuple[Stack, Path],
) -> None:
    """One byte every 0.5 s with Content-Length 10 MB; each read is quick, the download is not.
    The stall timeout (4 s) is below the deadline (8 s): the heartbeat keeps the watchdog
    from opening a second connection. A body cut short is refused. The dripping server gives
    up by itself after 60 s."""
    s, data = guarded
    routes = {
        "/slow-a.png": Drip(interval_s=0.5, max_s=60),
        "/slow-b.png": Drip(interval_s=0.5, max_s=60),
        "/cut.png": Truncated(example_png()[:68], content_length=len(example_png())),
    }
    with hostile_server(routes, host="127.0.0.2") as slow:
        rows = [
            {"id": path[1:-4], "prompt": EXAMPLE.match, "image": slow.url + path} for path in routes
        ]
        client = s.client(media_allow_networks=PUBLIC)
        dripping = client.submit("gecko-image", write_rows(data / "slow.jsonl", rows))
        wait_for(lambda: slow.open_now >= 2, 60, "both dripping downloads to start")
        (data / "b.png").write_bytes(example_png())
        other_rows = [{"id": f"b{i}", "prompt": EXAMPLE.match, "image": "b.png"} for i in range(3)]
        other = client.submit("gecko-image", write_rows(data / "other.jsonl", other_rows))
        other_summary = client.wait(other.job_id, timeout_s=120)
        assert other_summary.rows_scored == 3, [r.error for r in client.results(other.job_id)]
        summary = client.wait(dripping.job_id, timeout_s=120)
        results = {r.id: r for r in client.results(dripping.job_id)}
        for row_id in ("slow-a", "slow-b"):
            row = results[row_id]
            assert (row.status, row.reason) == ("failed", "input_error"), (row_id, row.error)
            assert f"{FETCH_DEADLINE_S} s deadline" in (row.error or ""), row.error
            assert slow.served(f"/{row_id}.png") == 1  # never re-driven while it was alive
        assert results["cut"].reason == "input_error"
        assert "truncated" in (results["cut"].error or ""), results["cut"].error
        assert summary.redriven == 0
