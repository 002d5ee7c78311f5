"""What a resume did (evalq.worker.jobs.control.JobControl.resume), in numbers and in the words
`evalq resume` and the Python API say it with."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResumeOutcome:
    """What a resume did, so it is never reported as more than it was. `before`: the status
    it found. `requeued`: rows put back in line for turns (sent as turns free up); `lost`: of
    those, rows of a running job that had neither a turn nor a place in line. `left`: rows of
    a running job left as they were (holding a turn, so in the broker or running, or waiting
    for one). `in_batches`: batch mode's rows not yet scored, whose batches are polled again
    (never sent again). `finished`: there was nothing to resume, the job is finished (it was,
    or every row of it was counted already and the resume finished it)."""

    job_id: str
    before: str
    requeued: int = 0
    lost: int = 0
    left: int = 0
    in_batches: int = 0
    finished: bool = False

    def describe(self) -> str:
        job = f"job {self.job_id}"
        if self.finished:
            if self.before == "finished":
                return f"{job} is finished: nothing to resume"
            return f"{job} was {self.before} with every row done: finished now, nothing to resume"
        if self.in_batches:
            return (
                f"{job} was {self.before}: {self.in_batches} rows wait on its batches, "
                "which are polled again (never sent twice)"
            )
        if self.before == "running":
            lost = f"{self.lost} rows that were lost (neither in flight nor waiting) re-sent"
            return f"{job} is running: {self.left} rows in flight or waiting left as they are, " + (
                lost if self.lost else "0 rows re-sent (none was lost)"
            )
        return f"{job} was {self.before}: {self.requeued} rows back in line"
