"""A Prometheus endpoint for job-level figures Flower does not have (rows done, score, 429s,
limiter waits, tokens and cost, task errors, human agreement), read from Redis at scrape time
so the exporter holds no state and any number of them can run."""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from evalq.core.counters import JobCounters
from evalq.core.models import JobSummary
from evalq.core.pricing import job_prices, summarize_cost, usd
from evalq.worker.batch import ledger as batch_ledger
from evalq.worker.store import Store

_COUNTERS = {
    "judge_calls": "HTTP requests made to judge models",
    "prompt_tokens": "prompt tokens sent to judges",
    "output_tokens": "output tokens received from judges",
    "candidate_calls": "calls to the model under test",
    "rate_limited": "429 replies received",
    "retries": "transient retries",
    "cache_hits": "judge calls served from the cache",
    "rubric_cache_hits": "rubrics reused",
    "redriven": "rows re-driven by the watchdog",
    "redrive_capped": "rows failed after EVALQ_MAX_REDRIVES re-drives without progress",
    "unit_tasks": "run_unit tasks sent",
    "units_inline": "units answered from the call cache in prepare_row, without a task",
    "task_errors": "exceptions that escaped a task's code (each recorded, retried, then the "
    "row failed or the job paused)",
}


class JobCollector(Collector):
    """The active jobs plus the `recent` most recent ones. A finished job's human agreement is
    read from its stored summary, so a scrape never recomputes intervals over every row; a role
    whose cost includes a model with no known price has no cost sample, and
    evalq_job_cost_unknown says so (a missing price is never exported as 0)."""

    def __init__(self, store: Store, recent: int = 20) -> None:
        self.store = store
        self.recent = recent

    def job_ids(self) -> list[str]:
        return sorted(set(self.store.active_jobs()) | set(self.store.list_jobs(self.recent)))

    def collect(self) -> Iterator[GaugeMetricFamily]:
        labels = ["job_id", "metric"]
        total = GaugeMetricFamily("evalq_job_rows_total", "rows in the job", labels=labels)
        done = GaugeMetricFamily("evalq_job_rows_done", "rows counted so far", labels=labels)
        by_status = GaugeMetricFamily(
            "evalq_job_rows", "rows by status", labels=[*labels, "status"]
        )
        score = GaugeMetricFamily(
            "evalq_job_mean_score", "mean row score so far (scored and partial rows)", labels=labels
        )
        state = GaugeMetricFamily(
            "evalq_job_status", "1 for the job's current status", labels=[*labels, "status"]
        )
        waited = GaugeMetricFamily(
            "evalq_job_limiter_wait_seconds",
            "time calls waited on the global rate limiter",
            labels=labels,
        )
        unscored = GaugeMetricFamily(
            "evalq_job_unscored_questions",
            "unscored verdicts by reason (the metric's units: questions, ratings, comparisons...)",
            labels=[*labels, "reason"],
        )
        counters = {
            name: GaugeMetricFamily(f"evalq_job_{name}", help_, labels=labels)
            for name, help_ in _COUNTERS.items()
        }
        cost = GaugeMetricFamily(
            "evalq_job_cost_usd",
            "cost in USD by role, at the job's prices (absent when a price is unknown)",
            labels=[*labels, "role"],
        )
        unknown = GaugeMetricFamily(
            "evalq_job_cost_unknown",
            "1 for a role whose cost includes a model with no known price",
            labels=[*labels, "role"],
        )
        tokens = GaugeMetricFamily(
            "evalq_job_tokens",
            "billed calls and tokens by role, model and kind (prompt, output, thought, cached)",
            labels=[*labels, "role", "model", "kind"],
        )
        spent = GaugeMetricFamily(
            "evalq_job_spent_usd",
            "priced spend so far (what --max-cost-usd is checked against)",
            labels=labels,
        )
        cap = GaugeMetricFamily(
            "evalq_job_max_cost_usd", "the spend cap in force (--max-cost-usd)", labels=labels
        )
        batches = GaugeMetricFamily(
            "evalq_job_batches",
            "batch mode: the job's Batch API batches by state (INGESTED once read)",
            labels=[*labels, "state"],
        )
        agreement = GaugeMetricFamily(
            "evalq_job_human_agreement",
            "a finished job's agreement with its human labels, by level and statistic "
            "(spearman, kendall, pairwise_accuracy, accuracy, kappa); absent when undefined",
            labels=[*labels, "level", "statistic"],
        )
        agreement_n = GaugeMetricFamily(
            "evalq_job_human_agreement_n",
            "what each agreement statistic is over (rows, pairs or labels)",
            labels=[*labels, "level", "statistic"],
        )
        for job_id in self.job_ids():
            try:
                job = self.store.counters(job_id)
                metric = self.store.config(job_id).metric
                reasons = self.store.unscored_counts(job_id)
            except Exception:  # expired between listing and reading
                continue
            key = [job_id, metric]
            total.add_metric(key, float(self.store.config(job_id).rows_total))
            done.add_metric(key, float(job.rows_done))
            for status, rows in (
                ("scored", job.rows_scored),
                ("partial", job.rows_partial),
                ("failed", job.rows_failed),
            ):
                by_status.add_metric([*key, status], float(rows))
            if job.mean_score is not None:
                score.add_metric(key, job.mean_score)
            state.add_metric([*key, job.status], 1.0)
            waited.add_metric(key, job.limiter_wait_ms / 1000)
            for reason, count in reasons.items():
                unscored.add_metric([*key, reason], float(count))
            for name, family in counters.items():
                family.add_metric(key, float(_counter(job, name)))
            config = self.store.config(job_id)
            table = job_prices(config.prices)
            usage = job.usage
            priced = summarize_cost(usage, table)
            for role, value in priced.by_role.items():
                if value is None:
                    unknown.add_metric([*key, role], 1.0)
                else:
                    cost.add_metric([*key, role], value)
            for entry in usage:
                for kind, amount in entry.tokens().items():
                    tokens.add_metric([*key, entry.role, entry.model, kind], float(amount))
            spent.add_metric(key, usd(job.spent_nanos))
            if job.budget_nanos:
                cap.add_metric(key, usd(job.budget_nanos))
            if job.status == "finished":
                self._agreement(job_id, key, agreement, agreement_n)
            if config.mode == "batch":
                for batch_state, count in batch_ledger.by_state(
                    batch_ledger.records(self.store, job_id)
                ).items():
                    batches.add_metric([*key, batch_state], float(count))
        scrape = GaugeMetricFamily("evalq_scrape_timestamp_seconds", "when these figures were read")
        scrape.add_metric([], time.time())
        yield from (
            total,
            done,
            by_status,
            score,
            state,
            waited,
            unscored,
            *counters.values(),
            cost,
            unknown,
            tokens,
            spent,
            cap,
            batches,
            agreement,
            agreement_n,
            scrape,
        )

    def _agreement(
        self,
        job_id: str,
        key: list[str],
        values: GaugeMetricFamily,
        counts: GaugeMetricFamily,
    ) -> None:
        """The stored summary's overall agreement figures per level (slices are left to the
        report: a label per tag and group would multiply the series)."""
        stored = self.store.summary_json(job_id)
        if not stored:
            return
        found = JobSummary.model_validate_json(stored).human_agreement
        for level in found.levels if found else []:
            for name in ("spearman", "kendall", "pairwise_accuracy", "accuracy", "kappa"):
                stat = getattr(level.overall, name)
                if stat is None:
                    continue
                counts.add_metric([*key, level.level, name], float(stat.n))
                if stat.value is not None:
                    values.add_metric([*key, level.level, name], stat.value)


def _counter(job: JobCounters, name: str) -> int:
    """One of _COUNTERS: a JobCounters field, or how many task errors escaped."""
    if name == "task_errors":
        return job.task_errors.count if job.task_errors else 0
    return int(getattr(job, name))


def serve(store: Store, host: str, port: int) -> None:
    """Serve /metrics until interrupted."""
    from prometheus_client import CollectorRegistry, start_http_server

    registry = CollectorRegistry()
    registry.register(JobCollector(store))
    server, thread = start_http_server(port, addr=host, registry=registry)
    print(f"evalq metrics on http://{host}:{port}/metrics", flush=True)
    try:
        while thread.is_alive():
            thread.join(1)
    except KeyboardInterrupt:
        server.shutdown()
