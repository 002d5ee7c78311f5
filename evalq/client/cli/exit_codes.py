"""Every exit code of the `evalq` command, in one place: the commands exit with these names, never
with a number of their own. Nothing here is imported but names: `evalq --help` loads no more."""

from __future__ import annotations

# A CI step reads one number: 1 is only ever a threshold not met (or sides judged differently),
# a job that ended without a usable result (no scored row, cancelled, paused) has a code of its
# own, and evalq's own bug (70) is never mistaken for either. A resume that found nothing to
# resume (8) is neither done (0: something continued) nor refused (2).
OK = 0
BELOW_THRESHOLD = 1
ERROR = 2
REDIS_DOWN = 3
NO_SCORED_ROW = 4
CANCELLED = 5
PAUSED = 6
NO_JUDGE = 7
NOTHING_TO_RESUME = 8
BUG = 70  # sysexits.h EX_SOFTWARE
INTERRUPTED = 130  # 128 + SIGINT, as a shell expects

# The manual's table (docs/concepts/jobs-rows-units.md, Exit codes), row for row and word for
# word: `| `CODE` | MEANING |` (tests/unit/client/test_exit_codes.py checks).
MEANINGS: dict[int, str] = {
    OK: "done; a job waited on (`run --wait`, `resume --wait`, `wait`) finished with scored "
    "rows (and met `--fail-under` when given)",
    BELOW_THRESHOLD: "`--fail-under` not met (a line per figure under it on stderr); "
    "`compare`/`leaderboard` sides judged differently, unless `--allow-mixed`",
    ERROR: "bad input or usage: a flag or dataset refused, no such job, a name or id prefix "
    "that fits several jobs (listed), the archive out of reach, a file that can't be read or "
    "written",
    REDIS_DOWN: "Redis did not answer (also after a wait rode out an outage as long as "
    "`EVALQ_REDIS_RETRY_MAX_S`)",
    NO_SCORED_ROW: "the job waited on ended with no scored row: every row failed "
    "(the last line gives the reasons)",
    CANCELLED: "the job waited on was cancelled (rows already scored stay readable)",
    PAUSED: "the job waited on is paused: a spend cap, a per-day quota, batch errors "
    "(the last line gives the reason; `evalq resume JOB` continues it)",
    NO_JUDGE: "`evalq worker` did not start: no judge it can reach (no key, no Vertex AI "
    "settings or credentials, or a base URL that does not answer), or a setting it can not use "
    "(a URL that does not parse); one line on stderr says which",
    NOTHING_TO_RESUME: "`evalq resume`: nothing to resume, the job is finished (one line on "
    "stderr says so; with `--wait` too, which then does not wait)",
    BUG: "an unexpected error, evalq's own bug: the traceback is printed",
    INTERRUPTED: "Ctrl-C: only the command stopped; a job it waited on runs on "
    "(`evalq wait JOB` re-attaches)",
}
