"""Steering a stored job: resume it (under a new spend cap if need be), cancel it and its batches
on the server, change its turns. What a person asks is checked here, and who asks: another
user's job is steered only when forced (evalq.client.owner)."""

from __future__ import annotations

from dataclasses import dataclass

from evalq.client.jobs.lookup import check_job_id
from evalq.client.owner import check_owner
from evalq.client.submit import (
    Sender,
    check_cap,
    check_turns,
    models_by_role,
    row_sender,
    step_sender,
)
from evalq.core.errors import EvalqError
from evalq.core.models import JobConfig
from evalq.core.pricing import job_prices, nanos, usd
from evalq.worker.jobs.control import JobControl, ResumeOutcome, Transition, TurnState

__all__ = ["Acting", "resume", "resume_outcome", "set_turns", "try_cancel"]


@dataclass(frozen=True)
class Acting:
    """Who asks (evalq.client.owner.current_user), whether they force acting on another
    user's job, and how they would force it (`--force`, `force=True`), for the refusal."""

    user: str
    force: bool = False
    flag: str = "force=True"


def owned(control: JobControl, job_id: str, acting: Acting) -> JobConfig:
    """The job's config (JobNotFound when Redis does not have it), if `acting` may steer it."""
    config = control.config(check_job_id(job_id))
    check_owner(job_id, config.owner, acting.user, force=acting.force, flag=acting.flag)
    return config


def resume(
    control: JobControl, app: Sender, job_id: str, max_cost_usd: float | None, acting: Acting
) -> int:
    """How many rows resume_outcome put back in line (0 for a finished job)."""
    outcome = resume_outcome(control, app, job_id, max_cost_usd, acting)
    return outcome.requeued or outcome.in_batches


def resume_outcome(
    control: JobControl,
    app: Sender,
    job_id: str,
    max_cost_usd: float | None,
    acting: Acting,
) -> ResumeOutcome:
    """Continue a paused, stopped or interrupted job with the rows not yet counted, and say
    what that took. A paused or cancelled job's rows all go back in line for turns
    (evalq.worker.dispatch.turns); a running job keeps the rows it has in flight or waiting, and
    only rows that lost their place go back in line. Stored rubrics, verdicts and cached calls are
    reused. `max_cost_usd` sets a new spend cap (the total, spend so far included); a job whose
    spend already reached its cap needs one."""
    config = owned(control, job_id, acting)  # raises JobNotFound
    if control.status(job_id) == "finished":
        return ResumeOutcome(job_id, "finished", finished=True)
    spent, cap = control.budget(job_id)
    if max_cost_usd is not None:
        table = job_prices(config.prices)
        judges = config.judge_models or [config.judge_model]
        check_cap(max_cost_usd, table, models_by_role(judges, config.options, judges[0]))
        if nanos(max_cost_usd) <= spent:
            raise EvalqError(
                f"job {job_id} has already spent ${usd(spent):.4f}: a cap of "
                f"${max_cost_usd:g} would pause it again at once; give a larger "
                "--max-cost-usd (the total, spend so far included)"
            )
        cap = nanos(max_cost_usd)
    elif cap is not None and spent >= cap:
        raise EvalqError(
            f"job {job_id} has spent ${usd(spent):.4f}, its cap of ${usd(cap):.4f} "
            "(--max-cost-usd): resume it with a larger cap, "
            f"`evalq resume {job_id} --max-cost-usd Y`"
        )
    return control.resume(job_id, cap, row_sender(app), step_sender(app))


def try_cancel(control: JobControl, job_id: str, acting: Acting) -> Transition:
    """Cancel unless the job is already finished or cancelled; says which it found (an online
    job notes the calls it left open, a batch job's batches are cancelled on the server)."""
    owned(control, job_id, acting)
    return control.cancel(job_id)


def set_turns(
    control: JobControl,
    app: Sender,
    job_id: str,
    acting: Acting,
    *,
    priority: str | None = None,
    max_in_flight: int | None = None,
) -> TurnState:
    """Change a job's priority or its cap on rows in flight (0 lifts the cap), running or not;
    turns freed by a wider cap go out now. Returns the job's turns as they are after it.
    Showing them (neither given) is anyone's; changing another user's takes force."""
    if priority is None and max_in_flight is None:
        control.config(check_job_id(job_id))  # raises JobNotFound
    else:
        owned(control, job_id, acting)
    check_turns(priority or "normal", max_in_flight or None)
    return control.set_turns(
        job_id, row_sender(app), priority=priority, max_in_flight=max_in_flight
    )
