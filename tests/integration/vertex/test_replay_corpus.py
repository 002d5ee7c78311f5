"""The replay corpus: reply bodies the real Gemini API and Vertex AI sent, each replayed by the
fake server over HTTP to the real google-genai client inside a real evalq worker, with the
outcome evalq must produce asserted for each.

The bodies are in tests/fixtures/gemini_replies/, one file per body, each naming where it was
published (a bug report, a recorded test cassette, a notebook's curl output) and when it was
recorded (its createTime or responseId timestamp where it has one, else when it was published).
Where the recorded text would not be a valid evalq verdict, the fixture says "Text
substituted; shape recorded": the verdict text was put inside the recorded parts, nothing else
changed. Every row is judged by `pointwise` (template `fluency`): one judge call per row, whose
answer is the JSON {"explanation": ..., "rating": 1-5}.

The rules evalq must follow, whatever the body:

- promptFeedback.blockReason present (any value) -> the unit is unscored, reason `blocked`.
- The first candidate's finishReason is a safety or policy reason (SAFETY, RECITATION,
  BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_SAFETY, IMAGE_PROHIBITED_CONTENT,
  IMAGE_RECITATION, MODEL_ARMOR, JAILBREAK) -> `blocked`.
- No candidates and no promptFeedback (`{}` included) -> `truncated`.
- finishReason MAX_TOKENS, or any other reason but STOP (OTHER, LANGUAGE, NO_IMAGE,
  MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, FINISH_REASON_UNSPECIFIED, none at all, a
  value nobody knows yet) -> `truncated`, and the text is never read, even a valid verdict.
- STOP with no answer text (no parts, an empty text) -> `parse_error`; STOP whose answer is
  another kind of part (only a functionCall), billed thinking or not -> `parse_error`; STOP
  whose only parts are thoughts, or nothing at all after billed thinking -> `truncated`.
- STOP with a valid verdict -> scored with that rating; with several candidates the first is
  read; thought parts are never read as the answer.
- A 200 body google-genai itself cannot read -> `parse_error`, asked once, not retried.
- 429 / 500 / 503 error bodies -> retried: the error is replayed once (`"times": 1`), then the
  row gets the recorded reply the fixture names in `then` and is scored.
- In every case the job's token counters (prompt_tokens, output_tokens, thought_tokens,
  cached_tokens) hold exactly the body's usageMetadata (promptTokenCount,
  candidatesTokenCount, thoughtsTokenCount, cachedContentTokenCount): blocked and empty
  replies are billed too. An unscored unit is never a score of 0 or 1: its result is null.

How: one job per body, holding the body's row (its response text carries a marker that the
body's script rule matches) and two control rows the simulated judge answers. A control-only
job run alongside gives the control rows' tokens, so each job's counters must equal the body's
usage plus those. Each 429 job runs on a judge model of its own, without control rows, so that
the delay it parks its model for (26 s asked by one body, evalq's own 10 s after Vertex's bare
429) holds up no other job's calls. A few bodies also run in one batch-mode
job (in a batch the raw 200 body becomes that request's response), beside a control-only batch
job. Every job is submitted at once and awaited together (about 40 s, most of it the 429's
delay and the first batch poll); each test then reads one job's outcome. All jobs use
use_cache=False, so no reply comes from evalq's call cache.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from devtools.local import WorkerPool
from tests.conftest import FakeGemini
from tests.support.datasets import write_rows
from tests.support.gemini_replies import Reply, Tokens, load_replies, usage_tokens

pytestmark = pytest.mark.integration

REPLIES = load_replies()
ONLINE = sorted(REPLIES)
# Bodies also replayed in one batch-mode job: every outcome but "retried" (a batch request is
# answered once), and no list body (a batch line holds one response object).
BATCH = [
    "stop_thoughts_tokens_batch_line",
    "stop_thoughts_tokens_batch_line_2",
    "stop_cached_content_tokens",
    "prompt_blocked_prohibited_content",
    "finish_safety_empty_content",
    "vertex_max_tokens_after_thinking",
    "finish_other_no_content",
    "stop_function_call_no_text",
    "empty_object",
]
# A 429 parks its model's calls (26 s asked; Vertex's asks nothing, so evalq's own 10 s).
OWN_MODEL = {
    "retry_429_retryinfo_26s": "gemini-2.0-flash",
    "vertex_retry_429_resource_exhausted": "gemini-2.0-flash-lite",
}
OPTIONS = {"template": "fluency"}
CONTROLS = [
    {
        "id": "control-1",
        "response": "The committee met on Tuesday and approved next year's budget without changes.",
    },
    {
        "id": "control-2",
        "response": "Rain is expected in the afternoon, so the outdoor concert moves indoors.",
    },
]
WAIT_S = 150.0  # for every job together; they take about 40 s


@dataclass
class Job:
    """One submitted job, what it ended as, and which script rules belong to it."""

    job_id: str
    mode: str
    rules: list[int] = field(default_factory=list)
    summary: Any = None
    rows: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass
class Run:
    online: dict[str, Job]
    batch: Job
    control_online: Job
    control_batch: Job
    fired: dict[str, int]

    def control_tokens(self, mode: str) -> Tokens:
        control = self.control_online if mode == "online" else self.control_batch
        return counted(control)


def marker(name: str, tag: str, mode: str) -> str:
    return f"[[replay {name} {mode} {tag}]]"


def corpus_row(name: str, tag: str, mode: str) -> dict[str, str]:
    return {
        "id": name,
        "response": f"A short answer to be rated for fluency. {marker(name, tag, mode)}",
    }


def counted(job: Job) -> Tokens:
    s = job.summary
    if s is None:
        return Tokens(-1, -1, -1, -1)
    return Tokens(s.prompt_tokens, s.output_tokens, s.thought_tokens, s.cached_tokens)


def replay_rules(reply: Reply, tag: str, mode: str) -> list[dict[str, Any]]:
    match = re.escape(marker(reply.name, tag, mode))
    if reply.outcome != "retried":
        return [{"match": match, "status": reply.status, "body": reply.body}]
    assert reply.then is not None, f"{reply.name}: a retried reply names its follow-up"
    follow_up = REPLIES[reply.then]
    return [
        {"match": match, "status": reply.status, "body": reply.body, "times": 1},
        {"match": match, "status": follow_up.status, "body": follow_up.body},
    ]


def wait_out(client: Any, job: Job, deadline: float) -> None:
    try:
        job.summary = client.wait(job.job_id, timeout_s=max(1.0, deadline - time.monotonic()))
    except TimeoutError as exc:
        job.error = str(exc)
        job.summary = client.summary(job.job_id)
    job.rows = {r.id: r for r in client.results(job.job_id)}


@pytest.fixture(scope="module")
def replayed(
    settings: Any,
    workers: WorkerPool,
    fake_gemini: FakeGemini,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Run]:
    from evalq.client import Client

    client = Client(settings)
    folder = tmp_path_factory.mktemp("replay")
    tag = uuid.uuid4().hex[:8]
    rules: list[dict[str, Any]] = []

    def take(new: list[dict[str, Any]]) -> list[int]:
        start = len(rules)
        rules.extend(new)
        return list(range(start, len(rules)))

    online_rules = {n: take(replay_rules(REPLIES[n], tag, "online")) for n in ONLINE}
    batch_rules = take([r for n in BATCH for r in replay_rules(REPLIES[n], tag, "batch")])
    fake_gemini.script(rules)
    fake_gemini.reset()

    def submit(name: str, rows: list[dict[str, str]], mode: str = "online", **kw: Any) -> str:
        data = write_rows(folder / f"{name}-{mode}.jsonl", rows)
        return str(
            client.submit(
                "pointwise", data, options=OPTIONS, use_cache=False, mode=mode, **kw
            ).job_id
        )

    started = time.monotonic()
    try:
        control_batch = Job(submit("controls", CONTROLS, "batch"), "batch")
        batch = Job(
            submit("corpus", [corpus_row(n, tag, "batch") for n in BATCH] + CONTROLS, "batch"),
            "batch",
            batch_rules,
        )
        control_online = Job(submit("controls", CONTROLS), "online")
        online: dict[str, Job] = {}
        for name in ONLINE:
            model = OWN_MODEL.get(name)
            rows = [corpus_row(name, tag, "online")] + ([] if model else CONTROLS)
            online[name] = Job(submit(name, rows, judge_model=model), "online", online_rules[name])
        deadline = started + WAIT_S
        for job in [control_online, *online.values(), control_batch, batch]:
            wait_out(client, job, deadline)
        stats = fake_gemini.stats()
        yield Run(
            online=online,
            batch=batch,
            control_online=control_online,
            control_batch=control_batch,
            fired={k: int(v) for k, v in stats["script_rules_fired"].items()},
        )
    finally:
        fake_gemini.script([])


def outcome_of(reply: Reply, row: Any) -> dict[str, Any]:
    """The row's unit as evalq left it, in the terms of the fixture's expectation."""
    unit = row.questions[0] if row.questions else None
    return {
        "row_status": row.status,
        "unit_status": unit.status if unit else None,
        "reason": unit.reason if unit else row.reason,
        "rating": row.details.get("mean_rating"),
        "score": row.score,
        "result": unit.result if unit else None,
        "detail": (unit.detail if unit else row.error) or "",
    }


def expected_outcome(reply: Reply) -> dict[str, Any]:
    if reply.outcome in ("scored", "retried"):
        assert reply.rating is not None
        return {
            "row_status": "scored",
            "unit_status": "ok",
            "reason": None,
            "rating": reply.rating,
            "score": (reply.rating - 1) / 4,
        }
    return {
        "row_status": "failed",
        "unit_status": "unscored",
        "reason": reply.reason,
        "rating": None,
        "score": None,
        "result": None,  # never a 0 or 1
    }


def check_outcome(reply: Reply, job: Job) -> None:
    assert job.error is None, f"{reply.name}: {job.error}"
    assert job.summary.status == "finished"
    got = outcome_of(reply, job.rows[reply.name])
    want = expected_outcome(reply)
    shown = {k: got[k] for k in want}
    assert shown == want, f"{reply.name} ({reply.what}): evalq said {got}"


# ---- the corpus itself --------------------------------------------------------------------


def test_the_corpus_holds_at_least_30_sourced_bodies() -> None:
    assert len(REPLIES) >= 30
    for reply in REPLIES.values():
        assert reply.source.startswith("https://"), reply.name
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", reply.date), reply.name
        assert reply.api in ("gemini", "vertex"), reply.name
        if reply.outcome == "unscored":
            assert reply.reason in ("blocked", "truncated", "parse_error"), reply.name
        if reply.status == 200 and reply.name != "vertex_stream_array_read_as_empty":
            assert reply.tokens == usage_tokens(reply.body), reply.name
        if reply.outcome == "retried":
            assert reply.then in REPLIES and REPLIES[reply.then].outcome == "scored"
            assert reply.tokens == REPLIES[reply.then].tokens, reply.name


# ---- online: one job per body ---------------------------------------------------------------


@pytest.mark.parametrize("name", ONLINE)
def test_outcome(replayed: Run, name: str) -> None:
    reply = REPLIES[name]
    job = replayed.online[name]
    check_outcome(reply, job)
    controls = [job.rows[c["id"]].status for c in CONTROLS if c["id"] in job.rows]
    assert controls == ["scored"] * len(controls), f"control rows beside {name}: {controls}"
    want = {} if reply.outcome != "unscored" else {str(reply.reason): 1}
    assert job.summary.unscored_by_reason == want


@pytest.mark.parametrize("name", ONLINE)
def test_tokens_are_the_body_usage(replayed: Run, name: str) -> None:
    reply = REPLIES[name]
    job = replayed.online[name]
    assert job.summary is not None, job.error
    controls = Tokens() if name in OWN_MODEL else replayed.control_tokens("online")
    want = reply.tokens + controls
    got = counted(job)
    assert got.as_dict() == want.as_dict(), (
        f"{name}: job counters {got.as_dict()}; the body bills {reply.tokens.as_dict()} "
        f"and the control rows {controls.as_dict()}"
    )


@pytest.mark.parametrize("name", ONLINE)
def test_asked_once_or_retried_once(replayed: Run, name: str) -> None:
    """A 200 body is asked for once, whatever it holds (an unreadable one is not retried); an
    error body fails once and the retry gets the follow-up reply."""
    reply = REPLIES[name]
    fired = [replayed.fired.get(str(i), 0) for i in replayed.online[name].rules]
    want = [1, 1] if reply.outcome == "retried" else [1]
    assert fired == want, f"{name}: its script rules fired {fired} times"


def test_controls_alone_are_scored_and_billed(replayed: Run) -> None:
    for job in (replayed.control_online, replayed.control_batch):
        assert job.error is None, job.error
        assert [r.status for r in job.rows.values()] == ["scored"] * len(CONTROLS)
        tokens = counted(job)
        assert tokens.prompt > 0 and tokens.output > 0


def test_the_429_job_was_rate_limited_once(replayed: Run) -> None:
    job = replayed.online["retry_429_retryinfo_26s"]
    assert job.summary is not None
    assert job.summary.rate_limited == 1


# ---- batch: the same outcomes when the body is a batch request's response ---------------------


@pytest.mark.parametrize("name", BATCH)
def test_batch_outcome(replayed: Run, name: str) -> None:
    check_outcome(REPLIES[name], replayed.batch)


def test_batch_tokens_are_the_bodies_usage(replayed: Run) -> None:
    job = replayed.batch
    assert job.summary is not None, job.error
    bodies = Tokens()
    for name in BATCH:
        bodies = bodies + REPLIES[name].tokens
    want = bodies + replayed.control_tokens("batch")
    assert counted(job).as_dict() == want.as_dict(), (
        f"batch counters {counted(job).as_dict()}; the bodies bill {bodies.as_dict()} and the "
        f"control rows {replayed.control_tokens('batch').as_dict()}"
    )


def test_batch_asked_each_body_once(replayed: Run) -> None:
    fired = [replayed.fired.get(str(i), 0) for i in replayed.batch.rules]
    assert fired == [1] * len(BATCH)
    want: dict[str, int] = {}
    for name in BATCH:
        if REPLIES[name].outcome == "unscored":
            reason = str(REPLIES[name].reason)
            want[reason] = want.get(reason, 0) + 1
    assert replayed.batch.summary.unscored_by_reason == want
