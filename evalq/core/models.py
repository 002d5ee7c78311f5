"""Pydantic models shared by the producer, the workers and the reports.

They are the contract between processes (stored as JSON in Redis), so every field that crosses
a process boundary is declared here and nowhere else.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalq.stats.intervals import IntervalMethod


class Model(BaseModel):
    """Every contract between processes. Validators are built on first use, not at import:
    a command that reads one summary does not pay for every model's schema."""

    model_config = ConfigDict(defer_build=True)


Tag = Literal[
    "object",
    "human",
    "animal",
    "food",
    "activity",
    "attribute",
    "counting",
    "color",
    "material",
    "spatial",
    "location",
    "shape",
    "other",
]
TAGS: tuple[str, ...] = Tag.__args__  # type: ignore[attr-defined]

UnscoredReason = Literal[
    "parse_error",
    "truncated",
    "incomplete_labels",
    "judge_error",
    "blocked",
    "quota_exhausted",
    "input_error",
]
RowStatus = Literal["scored", "partial", "failed"]
QuestionStatus = Literal["ok", "unscored"]


class MediaRef(Model):
    """Where a row's media lives; resolved to bytes or a URI by the worker, not the producer."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["path", "url", "file_uri", "inline"]
    value: str  # absolute path, URL, file URI, or base64 data for inline
    mime_type: str | None = None


QuestionSource = Literal["generated", "dataset"]


class Question(Model):
    """One rubric question; ``expected`` is the answer an image faithful to the prompt gives:
    "yes"/"no" when the choices are yes and no, otherwise the letter of one labelled choice."""

    question: str
    expected: str
    tag: str = "other"
    choices: list[str] = Field(default_factory=lambda: ["yes", "no"])
    keywords: list[str] = Field(default_factory=list)
    justification: str = ""
    source: QuestionSource = "generated"  # written by the rubric judge, or the row's own
    weight: float = 1.0  # its importance in the row's score (the rubric metric's tests)
    # A rater's answer (questions[].human) in the form of `expected`; one that could not be
    # read is None, `human_error` saying why (only the agreement figures leave it out).
    human: str | None = None
    human_error: str | None = None


class Coverage(Model):
    """How many of the prompt's keywords the rubric's questions cover."""

    keywords: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    asked_again: bool = False
    source: Literal["generated", "dataset"] = "generated"

    @property
    def fraction(self) -> float | None:
        if not self.keywords:
            return None
        return 1.0 - len(self.missing) / len(self.keywords)


class Rubric(Model):
    """A prompt's questions, cached across rows and jobs by (prompt, judge model, template)."""

    questions: list[Question]
    coverage: Coverage
    template_version: str
    judge_model: str
    simulated: bool = False


class RowInput(Model):
    """A validated dataset row, stored once in Redis and loaded by tasks by id.

    `media` maps a field name (image, video, document) to where its bytes are; `data` holds a
    metric's other fields (query, context, responses...). An unknown field is an error, not
    dropped: a row built with `image=` instead of `media=` would otherwise have no media."""

    model_config = ConfigDict(extra="forbid")

    id: str
    line: int
    prompt: str = ""
    media: dict[str, MediaRef] = Field(default_factory=dict)
    questions: list[Question] | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    extra: dict[str, Any] = Field(default_factory=dict)
    # In a multi-candidate job (--candidates), the column this cell's media or response came
    # from: one dataset row becomes one cell per candidate, each scored on its own.
    candidate: str | None = None
    # A field the metric read from a column of another name (groundedness's query from
    # Vertex's `prompt`, a rubric's prompt from `instruction`): field -> that column (before
    # --map), for exports. Stored only when there is one, so other rows read as before.
    read_from: dict[str, str] = Field(default_factory=dict, exclude_if=lambda value: not value)

    @property
    def image(self) -> MediaRef:
        return self.media["image"]


class Verdict(Model):
    """One unit's judge verdict (a question's answer, a label set, a rating...), or why there
    is none. `value` carries structured verdicts; `answer` the plain one."""

    index: int
    status: QuestionStatus
    answer: str | None = None
    value: Any = None
    judge_model: str | None = None
    result: int | None = None  # 1 matches expected, 0 does not, None unscored
    reason: UnscoredReason | None = None
    detail: str | None = None
    raw: str | None = None
    simulated: bool = False
    # Gecko --soft: the validator's probability of the expected answer, normalised over yes/no
    # (evalq.metrics.gecko.soft); None when not asked for or not readable (detail says why).
    probability: float | None = None
    # The version the API said answered (the reply's modelVersion): an alias such as
    # gemini-2.5-flash points at different versions over time. None: no reply was read.
    model_version: str | None = None


class QuestionResult(Model):
    question: str
    tag: str
    expected: str
    answer: str | None
    result: int | None
    status: QuestionStatus
    reason: UnscoredReason | None = None
    detail: str | None = None
    keywords: list[str] = Field(default_factory=list)  # the prompt keywords the question checks
    judge_model: str | None = None  # which validator judge answered (several judges per row)
    source: QuestionSource | None = None
    human: str | None = None  # the rater's answer (Question.human), compared with `answer`
    human_error: str | None = None  # why the rater's answer was left out
    # Gecko --soft: p(expected answer) normalised over yes/no, the question's soft score; the
    # hard answer and result above are kept beside it.
    probability: float | None = None
    model_version: str | None = None  # the reply's modelVersion (Verdict.model_version)
    weight: float = 1.0  # Question.weight: its share of the row's score
    rationale: str | None = None  # the judge's reason for its answer, where the metric keeps it


class Sample(Model):
    """One independent judge call of a repeated unit: its answer as the metric reads it
    ("yes", "B", "4", a label), the order it was shown in (pairwise), and the judge's own
    probability of that answer where it gave log probabilities."""

    answer: str | None  # None: this sample was unscored (its reason is on the unit's verdict)
    order: str | None = None  # pairwise: "AB" or "BA"
    probability: float | None = None


class Repeats(Model):
    """The samples one verdict was drawn from, fixed (`--samples K`) or adaptive
    (`--samples auto`), and how sure that verdict is: what the judge's noise floor is read from
    (evalq.stats.noise). A verdict still split at the maximum is `decided=False`: a split vote,
    never a sure 0 or 1."""

    unit: str  # what was asked, stable across samples: "q3", "rating", "A vs B", a sentence
    judge_model: str | None = None
    samples: list[Sample] = Field(default_factory=list)
    verdict: str | None = None  # the answer the samples settle on (None: split or unscored)
    decided: bool = True
    certainty: float | None = None  # the chance the verdict would stand at the maximum
    interval: tuple[float, float] | None = None  # ratings: the mean rating's interval
    rule: str | None = None  # the stopping rule that ended it ("fixed" for --samples K)

    @property
    def answered(self) -> bool:
        """Whether any sample gave an answer; a verdict with none is unscored, not split."""
        return any(s.answer is not None for s in self.samples)

    @property
    def undecided(self) -> bool:
        """Split at the maximum with at least one answer: the one count every view shows."""
        return self.answered and not self.decided


class RowResult(Model):
    """What a user reads back per row; ``score`` is None unless at least one question scored."""

    id: str
    line: int
    prompt: str
    status: RowStatus
    score: float | None
    tag_scores: dict[str, float] = Field(default_factory=dict)
    coverage: float | None = None
    coverage_missing: list[str] = Field(default_factory=list)
    questions: list[QuestionResult] = Field(default_factory=list)
    reason: UnscoredReason | None = None
    error: str | None = None
    simulated: bool = False
    details: dict[str, Any] = Field(default_factory=dict)  # metric-specific row output
    extra: dict[str, Any] = Field(default_factory=dict)
    candidate: str | None = None  # the candidate column of a multi-candidate job's cell
    # Judge model -> the version(s) the API reported for the row's verdicts (comma-joined
    # when one alias answered as several versions).
    model_versions: dict[str, str] = Field(default_factory=dict)
    # A fingerprint of the questions the row was scored on (Gecko's rubric); None elsewhere.
    question_set: str | None = None
    # Every repeated unit's samples and certainty (empty when each unit was asked once).
    repeats: list[Repeats] = Field(default_factory=list)

    @classmethod
    def of(cls, row: RowInput, **fields: Any) -> RowResult:
        """A row's result: its id, line, prompt and extra columns carried over as read, so a
        metric states only what it scored."""
        return cls(id=row.id, line=row.line, prompt=row.prompt, extra=row.extra, **fields)


class JobConfig(Model):
    """Everything a worker needs to know about a job; never holds secrets."""

    job_id: str
    metric: str
    judge_model: str
    dataset: str
    rows_total: int
    created_at: float
    use_cache: bool = True
    judge_models: list[str] = Field(
        default_factory=list
    )  # several judges, where a metric uses them
    options: dict[str, Any] = Field(default_factory=dict)  # metric options (template, samples...)
    data_roots: list[str] = Field(default_factory=list)  # local media only under these (resolved)
    warnings: list[str] = Field(default_factory=list)
    # Thinking per role (evalq.core.thinking): a budget, a level, "min", "modest" or "default".
    # Empty for jobs created before thinking settings existed: they send none, as they did.
    thinking: dict[str, int | str] = Field(default_factory=dict)

    @property
    def judges(self) -> list[str]:
        """The judge models each once, in the order given; the first is the main judge. Every
        metric with several judges makes one set of units per model in this list."""
        return list(dict.fromkeys(self.judge_models or [self.judge_model]))

    # The price table the job was submitted with (evalq.core.pricing, per model), so every worker
    # prices it alike; None for jobs created before prices were recorded (the worker's table).
    prices: dict[str, dict[str, Any]] | None = None
    # The spend cap asked for at submit; the cap in force lives on the job hash (resume may
    # change it).
    max_cost_usd: float | None = None
    # "batch": judge calls go through Gemini's Batch API (evalq.worker.batch), at the batch price;
    # "online": one generateContent call per unit. `on_expiry` says what batch mode does with
    # the unanswered requests of a batch that ends EXPIRED, FAILED or CANCELLED (not by us).
    mode: Literal["online", "batch"] = "online"
    on_expiry: Literal["resubmit", "online"] = "resubmit"
    # Vertex AI batch mode: the gs:// prefix the job's requests and results go under (the
    # submitter's --vertex-batch-prefix or EVALQ_VERTEX_BATCH_PREFIX); None on the Gemini API.
    vertex_batch_prefix: str | None = None
    # Turns between jobs (online mode, evalq.worker.dispatch.turns), as asked at submit; the ones in
    # force live on the job hash (`evalq turns JOB` changes them on a running job).
    priority: Literal["high", "normal", "low"] = "normal"
    max_in_flight: int | None = None
    # What the user calls the job (--name), the columns its figures are grouped by
    # (--group-by), and the dataset's own column names read as the metric's (--map: the
    # metric's field -> the dataset's column).
    name: str | None = None
    group_by: list[str] = Field(default_factory=list)
    column_map: dict[str, str] = Field(default_factory=dict)
    # How long the job's keys stay in Redis after their last write (the submitter's
    # EVALQ_RESULT_TTL_S); None in jobs stored before it was recorded: the writer's setting.
    ttl_s: int | None = None
    # Who submitted it: the Redis ACL user the submitter logged in as, else its OS user
    # (evalq.client.owner). Steering another user's job takes --force; None in jobs stored
    # before owners were recorded, which anyone steers.
    owner: str | None = None
    # The job whose stored inputs this one judges again (`evalq regrade JOB`); None otherwise.
    regrades: str | None = None
    # Where the judge is asked: "Gemini API" or "Vertex AI", as the submitter's settings say
    # (the workers read GOOGLE_GENAI_USE_VERTEXAI alike); None in jobs stored before.
    backend: str | None = None


class ScoreFigures(Model):
    """The mean score with its interval and the tag scores of some of a job's rows (one
    group's, one candidate's cells): evalq.core.scoring.score_figures computes them."""

    rows: int
    rows_scored: int
    mean_score: float | None
    ci95: tuple[float, float] | None
    ci_method: IntervalMethod | None = None
    tag_scores: dict[str, float] = Field(default_factory=dict)
    tag_counts: dict[str, int] = Field(default_factory=dict)


class GroupSummary(ScoreFigures):
    """The figures of the rows sharing one value of a user's column (--group-by), per
    candidate in a multi-candidate job (candidate None: a one-candidate job's rows)."""

    column: str
    value: str
    candidate: str | None = None


class CandidateSummary(ScoreFigures):
    """One candidate's figures in a multi-candidate job: its cells counted as rows."""

    rows_partial: int
    rows_failed: int
    # The metric's own figures over this candidate's cells (a pointwise candidate's mean
    # rating, ...); the job's metric_summary pools every candidate.
    metric_summary: dict[str, Any] = Field(default_factory=dict)


# What went wrong in a job, as its summary says it (JobSummary.task_errors and row_errors).
class TaskErrors(Model):
    """Exceptions that escaped a task's code (a bug, an SDK's unexpected error): how many, the
    last one ("Type: message"), the task it escaped from and when (epoch s). Each was retried;
    one that persisted failed its row (online) or paused the job (batch mode)."""

    count: int
    last_error: str | None = None
    task: str | None = None
    at: float | None = None


class FailoverNote(Model):
    """A Redis failover (or restart) the job lived through, which may have lost writes: when a
    worker first found Redis changed (epoch s), the calls whose lost spend the workers added
    back from their own tallies, and the calls whose spend may still be missing (a write cut
    off with its connection, whether it landed unknown; a worker that stopped before it saw
    the failover could not say what it lost)."""

    at: float
    calls_restored: int = 0
    calls_unconfirmed: int = 0

    def says(self) -> str:
        """One line for `evalq status`: what the job's figures may miss."""
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.at))
        said = f"lived through a Redis failover at {when}"
        if self.calls_restored:
            said += f"; {self.calls_restored} calls' lost spend restored from the workers' tallies"
        if self.calls_unconfirmed:
            return (
                f"{said}: up to {self.calls_unconfirmed} calls made before it may be missing "
                "from the cost"
            )
        return f"{said}: no call is known to be missing from the cost"


class RowErrorCount(Model):
    """One cause of failed rows (the row's error, without what names the row) and how many
    failed rows (cells, in a multi-candidate job) it is."""

    error: str
    rows: int


class RowErrors(Model):
    """The most common causes of the job's failed rows (evalq.core.row_errors): at most
    row_errors.TOP of them, most rows first, and the failed rows whose cause is none of those
    (`other_rows`, over `other_errors` distinct causes)."""

    top: list[RowErrorCount] = Field(default_factory=list)
    other_rows: int = 0
    other_errors: int = 0


# The summary's agreement with human labels (JobSummary.human_agreement).
HumanLevel = Literal["row", "question", "sentence", "preference"]


class AgreementStat(Model):
    """One agreement statistic with its 95% interval (evalq.core.human.estimate's Estimate): None
    when it cannot be computed, and `note` says why."""

    value: float | None
    ci95: tuple[float, float] | None = None
    n: int = 0  # rows, labels or pairs it is computed over
    method: str = ""
    note: str | None = None


class AgreementFigures(Model):
    """The statistics over one slice of the labels: all of them, one tag, or one group."""

    scope: str = "all"  # "all", "tag color", "group category=cats"
    labels: int = 0  # labels compared (a label and the judge's value both present)
    spearman: AgreementStat | None = None
    kendall: AgreementStat | None = None
    pairwise_accuracy: AgreementStat | None = None
    accuracy: AgreementStat | None = None
    kappa: AgreementStat | None = None


class HumanLevelAgreement(Model):
    """Agreement at one level the metric judges: the row's score, a Gecko question's answer,
    a groundedness sentence's label, a pairwise preference."""

    level: HumanLevel
    source: str  # where the labels come from: "column rating", "questions[].human"...
    judge_value: str  # what of the judge's they are compared with
    labels_used: int
    labels_left_out: int
    left_out_by_reason: dict[str, int] = Field(default_factory=dict)
    left_out_examples: list[str] = Field(default_factory=list)  # the first few, by row
    kappa_weights: str | None = None  # "quadratic" for ordinal ratings, None: unweighted
    pairs_grouped_by: str | None = None  # what rows share to form pairs (pairwise accuracy)
    overall: AgreementFigures
    by_tag: list[AgreementFigures] = Field(default_factory=list)
    by_group: list[AgreementFigures] = Field(default_factory=list)


NOISE_Z = 1.96  # a difference within NOISE_Z judge-noise standard errors is within the floor


class PanelNoise(Model):
    """How far a panel of judges errs together, against `reference`: the mean correlation of
    their errors over pairs of judges, and the number of independent judges it is worth
    (Kish's effective n). The figures are None, and `note` says why, without a reference."""

    judges: list[str]
    units: int = 0  # units every figure below is read from
    reference: str | None = None  # what an error is measured against (a --human column)
    error_correlation: float | None = None
    effective_judges: float | None = None
    note: str | None = None


class NoiseFloor(Model):
    """The judge's test-retest figures from the job's repeated units (evalq.stats.noise), each
    out of its own count of units; a figure the job's repeats cannot give is None."""

    units: int  # repeated units with at least two answered samples
    samples: int  # answered samples of those units
    undecided: int = 0  # verdicts still split at their maximum (a split vote)
    split_share: float | None = None  # units whose samples do not all agree
    split_ci95: tuple[float, float] | None = None
    # Krippendorff's alpha across samples: interval for ratings, nominal for answers.
    alpha: float | None = None
    alpha_level: Literal["nominal", "interval"] | None = None
    # Pairwise: units whose answers in the two orders (AB, BA) settle on different sides.
    order_units: int = 0
    order_disagreement: float | None = None
    order_ci95: tuple[float, float] | None = None
    # The standard error the mean score has from the judge's re-asking alone, and its 95%
    # band (NOISE_Z of them): a difference between two jobs' means inside either job's band
    # is within the judge's noise.
    mean_score_noise_se: float | None = None
    mean_score_noise_margin: float | None = None
    panel: PanelNoise | None = None


class HumanAgreement(Model):
    """How well the judge agrees with the dataset's human labels, per level it has labels
    for (evalq.core.human.agreement); `note` says why a level is missing or partial."""

    levels: list[HumanLevelAgreement] = Field(default_factory=list)
    note: str | None = None


class JobSummary(Model):
    """The job-level figures `run --json` and `status --json` print."""

    job_id: str
    metric: str
    status: Literal["running", "finished", "cancelled", "paused"]
    judge_model: str
    simulated: bool
    name: str | None = None  # --name
    owner: str | None = None  # who submitted it (JobConfig.owner)
    regrades: str | None = None  # the job whose inputs it judges again (JobConfig.regrades)
    backend: str | None = None  # "Gemini API" or "Vertex AI" (JobConfig.backend)
    dataset: str = ""  # the dataset file as submitted (resolved path)
    created_at: float | None = None  # epoch s
    rows_total: int
    rows_done: int
    rows_scored: int
    rows_partial: int
    rows_failed: int
    mean_score: float | None
    ci95: tuple[float, float] | None
    tag_scores: dict[str, float]
    tag_counts: dict[str, int]
    ci_method: IntervalMethod | None = None
    tag_ci95: dict[str, tuple[float, float] | None] = Field(default_factory=dict)
    tag_ci_method: dict[str, IntervalMethod | None] = Field(default_factory=dict)
    # Multi-candidate jobs (--candidates): each candidate's figures, in the order given; the
    # overall mean above pools every candidate's rows. Empty for one-candidate jobs.
    candidates: dict[str, CandidateSummary] = Field(default_factory=dict)
    # What mean_score (and ci95, tag_scores) is over: "all rows", or in a multi-candidate job
    # "pooled over N candidates" (each candidate's own figures are in `candidates`).
    mean_score_scope: str = "all rows"
    # The dataset's columns read as the metric's fields (--map: field -> column).
    column_map: dict[str, str] = Field(default_factory=dict)
    # Figures per value of each --group-by column (and per candidate), in the order met.
    group_by: list[str] = Field(default_factory=list)
    groups: list[GroupSummary] = Field(default_factory=list)
    unscored_by_reason: dict[str, int]
    # What those units are in the metric's words (Metric.judged_units: questions, ratings,
    # comparisons...); None in summaries written before it was recorded.
    judged_units: str | None = None
    rows_failed_by_reason: dict[str, int]
    judge_calls: int
    prompt_tokens: int
    output_tokens: int
    rubric_cache_hits: int
    cache_hits: int = 0
    retries: int
    rate_limited: int
    limiter_wait_s: float = 0.0
    redriven: int = 0
    redrive_capped: int = 0  # rows failed after EVALQ_MAX_REDRIVES re-drives without progress
    unit_tasks: int = 0  # run_unit tasks sent (a redelivered prepare_row's again)
    units_inline: int = 0  # units answered in prepare_row from the call cache, with no task
    candidate_calls: int = 0  # calls to the model under test (e.g. groundedness responses)
    candidate_prompt_tokens: int = 0
    candidate_output_tokens: int = 0
    thought_tokens: int = 0  # judges' thinking, billed as output (not in output_tokens)
    candidate_thought_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens served from Gemini's context cache
    thinking: dict[str, int | str] = Field(default_factory=dict)  # per role, as configured
    # Cost: billed tokens per role and model, priced from the job's price table. A figure that
    # includes a model with no known price is None (never 0), and cost_note says why.
    mode: str = "online"  # "batch": judged through the Batch API (see `batch`)
    batch: dict[str, Any] | None = None  # batch mode's figures and its on-expiry choice
    cost_usd: float | None = None
    cost_by_role: dict[str, float | None] = Field(default_factory=dict)
    cost_by_model: dict[str, float | None] = Field(default_factory=dict)
    tokens_by_role: dict[str, dict[str, int]] = Field(default_factory=dict)
    tokens_by_model: dict[str, dict[str, int]] = Field(default_factory=dict)
    usage: list[dict[str, Any]] = Field(default_factory=list)  # one entry per (role, model)
    prices_known: bool = True
    price_date: str | None = None
    prices: dict[str, str] = Field(default_factory=dict)  # model -> the price applied
    cost_note: str | None = None
    max_cost_usd: float | None = None  # the spend cap in force (--max-cost-usd)
    spent_usd: float = 0.0  # priced spend so far, what the cap is checked against
    pause_reason: str | None = None
    calls_open_at_cancel: int | None = None  # calls sent, not answered at the cancel
    # Turns between jobs (online mode): its priority and cap now, its rows holding a turn
    # (queued or running) and those waiting for one.
    priority: Literal["high", "normal", "low"] = "normal"
    max_in_flight: int | None = None
    rows_in_flight: int = 0
    rows_waiting: int = 0
    metric_summary: dict[str, Any] = Field(default_factory=dict)
    # Agreement with the dataset's human labels (evalq.core.human.agreement); None: none given.
    human_agreement: HumanAgreement | None = None
    warnings: list[str] = Field(default_factory=list)
    elapsed_s: float | None = None
    task_errors: TaskErrors | None = None  # None: no exception escaped a task of this job
    failover: FailoverNote | None = None  # None: no Redis failover seen while it ran
    # The most common causes of failed rows with their counts; None: no row failed.
    row_errors: RowErrors | None = None
    # A fingerprint of every row's question set together (Gecko); None when rows have none.
    question_set: str | None = None
    # How the job was judged, for comparisons across months: judge models, the versions the
    # API reported, prompt template versions, thinking, validator mode, samples.
    judge_setup: dict[str, Any] = Field(default_factory=dict)
    # The judge's own noise, read from the job's repeated units (--samples); None: none.
    noise_floor: NoiseFloor | None = None
