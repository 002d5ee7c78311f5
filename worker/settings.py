"""The one settings object. Environment variables use the EVALQ_ prefix; credentials follow
google-genai's own conventions. Explicit arguments (CLI flags, API calls) win over both."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from evalq.core import bounds
from evalq.core.pricing import Price, PriceError, price_table
from evalq.core.thinking import ThinkingError, parse_settings


class ModelLimit(BaseModel):
    """Per-model quota as the provider grants it; the limiter paces every worker to it."""

    rpm: int | None = Field(default=None, gt=0)
    tpm: int | None = Field(default=None, gt=0)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="EVALQ_", extra="ignore", populate_by_name=True)

    redis_url: str = "redis://127.0.0.1:6379/0"
    # TLS to Redis, with a rediss:// URL (worker.redis_tls): the CA file that signed Redis's
    # certificate (unset: the system's CAs), and a client certificate and key for a Redis that
    # asks for one (tls-auth-clients). Every connection checks Redis's certificate and name.
    redis_tls_ca: str | None = None
    redis_tls_cert: str | None = None
    redis_tls_key: str | None = None
    judge_model: str = "gemini-2.5-flash"

    # Credentials: never stored in Redis, task arguments or logs (SecretStr keeps them out of reprs).
    api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GEMINI_API_KEY", "GOOGLE_API_KEY")
    )
    # A Vertex API key (express mode, or a key bound to a service account), sent on Vertex AI
    # instead of application-default credentials. A setting of its own: GEMINI_API_KEY and
    # GOOGLE_API_KEY name a Gemini API key, which Vertex would refuse, and google-genai itself
    # ignores them once a project and location are set.
    vertex_api_key: SecretStr | None = None
    use_vertexai: bool = Field(default=False, validation_alias="GOOGLE_GENAI_USE_VERTEXAI")
    vertex_project: str | None = Field(default=None, validation_alias="GOOGLE_CLOUD_PROJECT")
    vertex_location: str | None = Field(default=None, validation_alias="GOOGLE_CLOUD_LOCATION")
    gemini_base_url: str | None = None  # e.g. the fake server: http://127.0.0.1:8765
    gemini_api_version: str | None = None

    # gevent: one process holds hundreds of judge calls in flight (they wait on the network);
    # threads: a thread per call. Concurrency unset: 200 greenlets, or 16 threads.
    worker_pool: Literal["gevent", "threads"] = "gevent"
    worker_concurrency: int | None = Field(default=None, ge=1)
    judge_timeout_s: float = Field(default=60.0, gt=0)
    transient_attempts: int = Field(default=4, ge=1)
    transient_max_wait_s: float = Field(default=10.0, gt=0)
    rate_limit_max_retries: int = Field(default=30, ge=0)
    # Total time one unit may spend in rate-limit retries after its first 429: a 429 that says
    # nothing of its kind (no RetryInfo, no quota id) must not keep a unit waiting for hours.
    rate_limit_max_total_s: float = Field(default=1200.0, gt=0)
    # The same 4xx refusal (bad key, unknown model, bad budget) this many times pauses the job
    # with that reason instead of burning through every row; 0 turns it off.
    fatal_error_limit: int = Field(default=5, ge=0)
    max_retry_delay_s: float = Field(default=300.0, gt=0)
    task_time_limit_s: int = Field(default=540, gt=0)
    visibility_timeout_s: int = Field(default=900, gt=0)
    result_ttl_s: int = Field(default=7 * 24 * 3600, gt=0)
    rubric_ttl_s: int = Field(default=30 * 24 * 3600, gt=0)
    media_max_bytes: int = Field(default=20 * 1024 * 1024, gt=0)
    media_timeout_s: float = Field(default=30.0, gt=0)  # one read or connect, not a download
    # A whole download (DNS, connect, redirects, body) ends by then: a server that drips bytes
    # can not hold a worker thread longer than this.
    media_fetch_deadline_s: float = Field(default=60.0, gt=0)
    media_max_redirects: int = Field(default=5, ge=0)
    # Local media are read only under these folders (os.pathsep-separated, or a JSON list).
    # Unset: each job's own roots (its dataset's folder, or --data-root). Set on a worker, it
    # bounds every job: a path must be under a job root and under one of these.
    data_roots: Annotated[tuple[Path, ...], NoDecode] = ()
    # URLs that resolve to loopback, private, link-local or reserved addresses are refused
    # unless this is true (cloud metadata addresses always are), or the address is in one of
    # media_allow_networks (comma-separated CIDRs, e.g. 10.1.2.0/24).
    media_allow_private: bool = False
    media_allow_networks: Annotated[tuple[str, ...], NoDecode] = ()
    # Media larger than this goes to the judge through the Files API (uploaded once per job)
    # instead of inline in every request; Gemini caps a whole request at 20 MB.
    inline_max_bytes: int = Field(default=15 * 1024 * 1024, ge=0)
    upload_timeout_s: float = Field(default=300.0, gt=0)  # one upload, and its processing
    # The answer's allowance; thinking gets room on top of it (evalq.core.thinking.output_allowance).
    max_output_tokens: int = Field(default=4096, gt=0)
    # What one submit may hold (evalq.core.bounds): a field (a cell, or a JSON value measured as
    # JSON), a row (its fields' names and values together) and a row's own questions (a judge
    # call each) fail their row past these; a dataset over its bytes, rows or CSV columns is
    # refused before anything is stored. Per job, the API's max_field_bytes, max_row_bytes and
    # max_questions_per_row win over the first three.
    max_field_bytes: int = Field(default=bounds.MAX_FIELD_BYTES, gt=0)
    max_row_bytes: int = Field(default=bounds.MAX_ROW_BYTES, gt=0)
    max_questions_per_row: int = Field(default=bounds.MAX_QUESTIONS_PER_ROW, gt=0)
    max_dataset_bytes: int = Field(default=bounds.MAX_DATASET_BYTES, gt=0)
    max_rows_per_job: int = Field(default=bounds.MAX_ROWS_PER_JOB, gt=0)
    max_csv_columns: int = Field(default=bounds.MAX_CSV_COLUMNS, gt=0)
    # A row's stored plan (its rubric or candidates, as JSON): a larger one fails the row.
    max_plan_bytes: int = Field(default=8 * 1024 * 1024, gt=0)
    # Thinking per role, JSON: {"validator": 0, "rubric": 2048, "judge": "min",
    # "candidate": "default"}; over evalq's defaults, under per-job flags (evalq.core.thinking).
    thinking: dict[str, int | str] = Field(default_factory=dict)

    # Prices per model over evalq's defaults (evalq.core.pricing), JSON: {"gemini-2.5-flash":
    # {"input": 0.3, "output": 2.5, "cached_input": 0.03}, "my-model": {...}, "old-model": null}
    prices: dict[str, Any] = Field(default_factory=dict)

    # JSON, e.g. {"gemini-2.5-flash": {"rpm": 1000, "tpm": 1000000}, "*": {"rpm": 60}}
    rate_limits: dict[str, ModelLimit] = Field(default_factory=dict)
    limiter_max_wait_s: float = Field(default=10.0, ge=0)
    call_cache_ttl_s: int = Field(default=30 * 24 * 3600, gt=0)
    watchdog_interval_s: float = Field(default=10.0, gt=0)
    stall_timeout_s: float = Field(default=120.0, gt=0)
    # Redis out of reach: one command gives up after redis_socket_timeout_s (an error, not a
    # hang), and tasks retry (Celery retries with backoff) and clients wait for at most
    # redis_retry_max_s before failing without writing anything in its place.
    redis_socket_timeout_s: float = Field(default=5.0, gt=0)
    redis_retry_max_s: float = Field(default=300.0, ge=0)

    # Celery's STARTED state for each task (a write and a publish per task that nothing of
    # evalq reads): off unless someone wants it in Flower or the result backend.
    task_track_started: bool = False
    # Task events for Flower (monitoring is part of the product): on by default; off saves the
    # event messages every task sends (the scaling benchmark measures both).
    task_events: bool = True
    # With task events on, also Celery's "task-sent" event (Flower shows a task as queued before
    # a worker takes it): one more event message per task, off by default.
    task_sent_events: bool = False
    # A gevent worker sends its task events in batches, every this many seconds (and whenever
    # Celery's batch limit fills): a third of the events' cost per task. 0 sends each at once.
    task_event_flush_s: float = Field(default=0.5, ge=0)

    # Turns between jobs (worker.turns): at most turn_window rows of running online jobs are
    # in the broker or running at once, cluster-wide; 0 adds up the shares of the workers alive
    # now, each sized by the worker (worker.pace) so that a task queued now waits about
    # turn_wait_s, and at most turns_per_slot x its task slots; never below turn_window_min,
    # so a job submitted before any worker starts still has turns waiting.
    turn_window: int = Field(default=0, ge=0)
    turn_wait_s: float = Field(default=0.2, gt=0)
    turns_per_slot: float = Field(default=1.5, gt=0)
    turn_window_min: int = Field(default=4, ge=1)

    # A row re-driven this many times in a row without a new verdict fails (judge_error) instead
    # of being driven again: something kills or hangs every task that handles it.
    max_redrives: int = Field(default=5, ge=1)

    # An exception no handler names (a bug of ours, an SDK's TypeError) escaping a task: it is
    # recorded on the job and the task runs again after a jittered backoff (base, doubling, up
    # to the max) this many times; then the row fails with that error (online) or the job
    # pauses with it (batch mode). worker.task_errors applies it for every task.
    task_error_retries: int = Field(default=3, ge=0)
    task_error_backoff_s: float = Field(default=1.0, ge=0)
    task_error_backoff_max_s: float = Field(default=30.0, ge=0)

    # The archive (worker.archive), the system of record for ended jobs: a SQLAlchemy URL,
    # sqlite:///PATH or postgresql://user@host/db (every host of a team on one PostgreSQL).
    # Unset: SQLite at default_archive_path(); "off": no archive, Redis only.
    archive_url: str | None = None
    # A job whose archive write failed (or whose writer died) is written again by a watchdog
    # sweep this long after, the wait doubling per failure up to archive_retry_max_s.
    archive_retry_s: float = Field(default=30.0, gt=0)
    archive_retry_max_s: float = Field(default=600.0, gt=0)

    # Batch mode (worker.batch): how often a batch in flight is polled (the interval grows by
    # half each poll, up to the max), and how many times a job's batches may end EXPIRED,
    # FAILED or CANCELLED (not by us) and be sent again before the job pauses.
    batch_poll_initial_s: float = Field(default=10.0, gt=0)
    batch_poll_max_s: float = Field(default=300.0, gt=0)
    batch_max_resubmits: int = Field(default=3, ge=0)
    # A request that failed transiently inside a batch (INTERNAL, UNAVAILABLE,
    # DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED) or got no result goes into this many more batches
    # before its error is its answer (judge_error).
    batch_request_retries: int = Field(default=2, ge=0)
    # A batch reported SUCCEEDED with no output attached is polled again for this long before
    # the job pauses with that reason (its requests are never sent again meanwhile).
    batch_output_wait_s: float = Field(default=3600.0, gt=0)
    # At most this many batches per job, every round counted: past it the job pauses.
    batch_max_batches: int = Field(default=100, ge=1)
    # A results file larger than this is not downloaded: the job pauses with that reason.
    batch_results_max_bytes: int = Field(default=4 * 1024**3, gt=0)
    # At most this many requests per round (a sweep leaves the rest for the next round).
    batch_max_requests: int = Field(default=100_000, gt=0)
    # Vertex AI batch mode: the Cloud Storage prefix (gs://BUCKET/FOLDER) a job's requests are
    # written under and its results read from; `evalq run --vertex-batch-prefix` wins over it.
    vertex_batch_prefix: str | None = None

    @field_validator("data_roots", mode="before")
    @classmethod
    def _split_roots(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [part for part in text.split(os.pathsep) if part.strip()]
        return value

    @field_validator("archive_url")
    @classmethod
    def _usable_archive_url(cls, value: str | None) -> str | None:
        from worker.archive.place import ArchiveURLError, archive_place

        try:
            archive_place(value)
        except ArchiveURLError as exc:
            raise ValueError(f"EVALQ_ARCHIVE_URL: {exc}") from None
        return value

    @field_validator("media_allow_networks", mode="before")
    @classmethod
    def _split_networks(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        for network in value:
            ipaddress.ip_network(network, strict=False)  # a typo fails at start-up
        return value

    @field_validator("thinking")
    @classmethod
    def _known_roles_and_values(cls, value: dict[str, int | str]) -> dict[str, int | str]:
        try:
            return dict(parse_settings(value))
        except ThinkingError as exc:
            raise ValueError(f"EVALQ_THINKING: {exc}") from None

    @field_validator("prices")
    @classmethod
    def _usable_prices(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            price_table(value)
        except PriceError as exc:
            raise ValueError(f"EVALQ_PRICES: {exc}") from None
        return value

    def price_table(self) -> dict[str, Price]:
        """evalq's default prices with EVALQ_PRICES applied."""
        return price_table(self.prices)

    def input_bounds(self) -> bounds.InputBounds:
        """The bounds a submit's dataset is loaded under (its loader takes them as values)."""
        names = [item.name for item in dataclasses.fields(bounds.InputBounds)]
        return bounds.InputBounds(**{name: getattr(self, name) for name in names})

    @model_validator(mode="after")
    def _visibility_covers_longest_hold(self) -> Self:
        # A message is redelivered once unacked for visibility_timeout_s; a task holds it for up
        # to its time limit, and a countdown retry keeps it reserved for up to max_retry_delay_s.
        longest = self.task_time_limit_s + self.max_retry_delay_s
        if self.visibility_timeout_s <= longest:
            raise ValueError(
                f"EVALQ_VISIBILITY_TIMEOUT_S ({self.visibility_timeout_s}) must exceed "
                f"EVALQ_TASK_TIME_LIMIT_S + EVALQ_MAX_RETRY_DELAY_S ({longest:.0f}), "
                "or messages are redelivered while still being worked on"
            )
        return self

    @model_validator(mode="after")
    def _tls_needs_rediss(self) -> Self:
        given = [
            name
            for name in ("redis_tls_ca", "redis_tls_cert", "redis_tls_key")
            if getattr(self, name)
        ]
        if given and not self.redis_url.startswith("rediss://"):
            names = ", ".join(f"EVALQ_{name.upper()}" for name in given)
            raise ValueError(
                f"{names} set, but EVALQ_REDIS_URL is not a rediss:// URL: "
                "TLS to Redis needs rediss://"
            )
        if bool(self.redis_tls_cert) != bool(self.redis_tls_key):
            raise ValueError("EVALQ_REDIS_TLS_CERT and EVALQ_REDIS_TLS_KEY go together")
        return self

    @property
    def concurrency(self) -> int:
        """Tasks one worker process runs at once: the pool's size, and what its connection
        pools (Redis, the judge's HTTP client) must make room for."""
        if self.worker_concurrency is not None:
            return self.worker_concurrency
        return 200 if self.worker_pool == "gevent" else 16

    @property
    def connection_slots(self) -> int:
        """Connections a worker's pools (Redis, broker, result backend, the judge's HTTP
        client) allow: one per task running at once, and room for the worker's own threads.
        redis-py and httpx both default to 100, and a greenlet past the cap gets an error."""
        return self.concurrency + 50

    @property
    def uses_fake_judge(self) -> bool:
        return self.api_key is None and not self.use_vertexai


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
