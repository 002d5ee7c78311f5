"""`evalq rubrics DATASET --out FILE`: freeze the question set of every prompt of a Gecko dataset
into a dataset file a person can review and edit, then run as it stands with `--questions
replace`."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from evalq.client.rubric_file import write_file
from evalq.client.rubric_judge import Tally, TallyingJudge, rubric_judge
from evalq.core.column_map import check_column_map, rename_columns
from evalq.core.dataset import LoadedDataset, load_dataset
from evalq.core.errors import DatasetError, JudgeError, policy_of
from evalq.core.judge import Judge
from evalq.core.metric import QuestionSetMetric, get_metric
from evalq.core.models import RowInput, Rubric
from evalq.core.options import validate_options
from evalq.core.records import records
from evalq.core.shared_cache import CLAIM_TTL_S, RECHECK_S, ClaimingKeyValue
from evalq.worker.jobs.control import JobControl
from evalq.worker.settings import Settings

THREADS = 4  # rubric calls in flight at once: the global limiter still spaces them
ERRORS_SHOWN = 10

Progress = Callable[[str], None]


@dataclass
class RubricsReport:
    """What `evalq rubrics` did."""

    out: Path
    metric: str
    rubric_model: str
    rows: int
    prompts: int  # distinct prompts that needed a question set
    from_cache: int
    generated: int
    own_questions: int  # rows that kept their own questions
    paths_rewritten: int
    data_roots: list[str]  # the --data-root the run needs (empty: none)
    column_map: dict[str, str]
    simulated: bool
    tally: Tally

    def run_command(self) -> str:
        """How to run the file as it stands."""
        parts = ["evalq run", self.metric, str(self.out), "--questions replace"]
        parts += [f"--data-root {root}" for root in self.data_roots]
        parts += [f"--map {f}={c}" for f, c in self.column_map.items()]
        return " ".join(parts)

    def lines(self) -> list[str]:
        t = self.tally
        thinking = f", thinking {t.thought_tokens:,}" if t.thought_tokens else ""
        out = [
            f"{self.out}: {self.rows} rows, {self.metric}, rubric model {self.rubric_model}"
            + (" (SIMULATED)" if self.simulated else ""),
            f"question sets: {self.prompts} prompts: {self.from_cache} from the rubric cache, "
            f"{self.generated} generated; {self.own_questions} rows kept their own questions",
            f"rubric calls: {t.calls} sent, {t.cached} from the call cache; tokens: prompt "
            f"{t.prompt_tokens:,}, output {t.output_tokens:,}{thinking}",
        ]
        if self.paths_rewritten:
            out.append(
                f"{self.paths_rewritten} relative media paths rewritten to resolve from "
                f"{self.out.parent}"
            )
        if self.data_roots:
            roots = " ".join(f"--data-root {r}" for r in self.data_roots)
            out.append(f"the media are outside {self.out.parent}: the run needs {roots}")
        out.append(f"review and edit the questions, then: {self.run_command()}")
        return out


def dataset_columns(path: Path, column_map: Mapping[str, str]) -> set[str]:
    """The columns (read as the metric's fields) with a value in at least one record."""
    found: set[str] = set()
    warnings: list[str] = []
    for number, read in records(path, (), warnings):
        if isinstance(read, dict):
            record = rename_columns(number, read, column_map, path)
            found |= {k for k, v in record.items() if v not in (None, "")}
    return found


def choose_metric(path: Path, metric: str | None, column_map: Mapping[str, str]) -> str:
    """--metric, else the Gecko metric whose media column the dataset has."""
    if metric is None:
        from evalq.metrics.gecko.question_sets import metric_for_columns

        metric = metric_for_columns(dataset_columns(path, column_map))
    if not isinstance(get_metric(metric), QuestionSetMetric):
        raise DatasetError(f"--metric {metric}: it asks no question sets to write")
    return metric


def write_rubrics(
    settings: Settings,
    control: JobControl,
    dataset: str | Path,
    out: str | Path,
    *,
    metric: str | None = None,
    rubric_model: str | None = None,
    use_cache: bool = True,
    column_map: Mapping[str, str] | None = None,
    data_roots: Sequence[str | Path] | None = None,
    threads: int = THREADS,
    progress: Progress | None = None,
) -> RubricsReport:
    """Write every row of `dataset` with its question set to `out`: each prompt's questions
    from the shared rubric cache (the workers' key) when it holds them, else written here by
    the rubric judge in a few threads and put in that cache; rows with their own keep theirs."""
    from evalq.worker.judges.files import media_rules

    say = progress or (lambda _: None)
    path, target = Path(dataset), Path(out)
    if target.resolve() == path.resolve():
        raise DatasetError(f"--out {target} is the dataset itself; write to another file")
    if not target.parent.is_dir():
        raise DatasetError(f"--out {target}: no folder {target.parent}")
    renames = check_column_map(column_map)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    name = choose_metric(path, metric, renames)
    spec = get_metric(name)
    assert isinstance(spec, QuestionSetMetric)
    model = rubric_model or settings.judge_model
    options = validate_options(name, {"rubric_model": model} if rubric_model else {})
    roots = [str(r) for r in data_roots or settings.data_roots or [path.parent]]
    rules = media_rules(settings, roots)
    bounds = settings.input_bounds()
    loaded = load_dataset(path, name, options, rules, bounds=bounds, column_map=renames)
    refuse_bad_rows(loaded)
    need = list(dict.fromkeys(r.prompt for r in loaded.rows if not r.questions))
    say(f"{path}: {loaded.total} rows, {len(need)} prompts need a question set ({name})")
    kv = control.rubrics()
    tally = Tally()
    found: dict[str, Rubric] = {}
    if use_cache:
        for prompt in need:
            if (hit := kv.get(spec.rubric_key(prompt, model))) is not None:
                found[prompt] = Rubric.model_validate_json(hit)
    from_cache = len(found)
    if from_cache:
        say(f"{from_cache} of {len(need)} from the rubric cache")
    to_write = [p for p in need if p not in found]
    judge: Judge | None = None
    if to_write:
        judge = TallyingJudge(rubric_judge(settings, control, model, use_cache), tally)
    written, failed = _write_all(
        spec, judge, kv, model, to_write, use_cache, settings.rubric_ttl_s, threads, say
    )
    found.update({p: rubric for p, (rubric, _) in written.items()})
    empty = {p: "it holds no question" for p in need if p in found and not found[p].questions}
    if failed or empty:
        kept = len(found) - len(empty)
        raise DatasetError(_failures({**failed, **empty}, loaded.rows, kept))
    cached_meanwhile = [p for p, (_, wrote) in written.items() if not wrote]
    rewritten, needed = write_file(path, target, name, loaded, found, renames, rules, settings)
    return RubricsReport(
        out=target,
        metric=name,
        rubric_model=model,
        rows=loaded.total,
        prompts=len(need),
        from_cache=from_cache + len(cached_meanwhile),
        generated=len(written) - len(cached_meanwhile),
        own_questions=sum(1 for r in loaded.rows if r.questions),
        paths_rewritten=rewritten,
        data_roots=needed,
        column_map=dict(renames),
        simulated=any(r.simulated for r in found.values()),
        tally=tally,
    )


def refuse_bad_rows(loaded: LoadedDataset) -> None:
    """Rows the loader refuses would be refused by the run too: named, nothing written."""
    if not loaded.errors:
        return
    shown = "; ".join(str(err) for _, err in loaded.errors[:ERRORS_SHOWN])
    more = len(loaded.errors) - ERRORS_SHOWN
    raise DatasetError(
        f"{len(loaded.errors)} row(s) could not be read, nothing was written: {shown}"
        + (f"; and {more} more" if more > 0 else "")
    )


def _write_all(
    spec: QuestionSetMetric,
    judge: Judge | None,
    kv: ClaimingKeyValue,
    model: str,
    prompts: list[str],
    use_cache: bool,
    ttl_s: int,
    threads: int,
    say: Progress,
) -> tuple[dict[str, tuple[Rubric, bool]], dict[str, str]]:
    """Each prompt's rubric, written in `threads` threads: (prompt -> (rubric, written here),
    prompt -> why it failed). A spent daily quota stops what has not started."""
    written: dict[str, tuple[Rubric, bool]] = {}
    failed: dict[str, str] = {}
    if not prompts or judge is None:
        return written, failed

    def one(prompt: str) -> tuple[Rubric, bool]:
        key = spec.rubric_key(prompt, model)
        return _cached_or_written(
            kv, key, ttl_s, use_cache, lambda: spec.write_questions(judge, prompt)[0]
        )

    step = max(1, -(-len(prompts) // 10))  # at most about ten progress lines
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        pending: dict[Future[tuple[Rubric, bool]], str] = {pool.submit(one, p): p for p in prompts}
        halted = False
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                prompt = pending.pop(future)
                if future.cancelled():
                    failed[prompt] = "not asked: the judge's quota ran out"
                    continue
                exc = future.exception()
                if exc is None:
                    written[prompt] = future.result()
                elif isinstance(exc, JudgeError):
                    failed[prompt] = exc.message
                    if policy_of(exc) == "pause" and not halted:
                        halted = True
                        for other in pending:
                            other.cancel()
                else:
                    raise exc
            finished = len(written) + len(failed)
            if finished == len(prompts) or finished // step > (finished - len(done)) // step:
                say(f"{finished}/{len(prompts)} rubrics written")
    return written, failed


def _cached_or_written(
    kv: ClaimingKeyValue,
    key: str,
    ttl_s: int,
    use_cache: bool,
    write: Callable[[], Rubric],
) -> tuple[Rubric, bool]:
    """The rubric under `key`, and whether it was written here. The writer claims the entry
    first, as a worker does (evalq.core.shared_cache), so a worker writing the same prompt now
    is waited for and read, not raced."""
    deadline = time.monotonic() + CLAIM_TTL_S + RECHECK_S
    while True:
        if use_cache and (hit := kv.get(key)) is not None:
            return Rubric.model_validate_json(hit), False
        if kv.claim(key, CLAIM_TTL_S):
            try:
                if use_cache and (hit := kv.get(key)) is not None:
                    return Rubric.model_validate_json(hit), False
                rubric = write()
                kv.set(key, rubric.model_dump_json(), ttl_s)
                return rubric, True
            finally:
                kv.release(key)
        if time.monotonic() > deadline:
            raise JudgeError("another process holds this prompt's rubric and has not written it")
        time.sleep(RECHECK_S / 5)


def _failures(failed: Mapping[str, str], rows: list[RowInput], kept: int) -> str:
    """Each failed prompt's first row, named with the field it lacks."""
    first: dict[str, RowInput] = {}
    for row in rows:
        first.setdefault(row.prompt, row)
    parts = [
        f"row {first[p].id} (line {first[p].line}): field 'questions': no question set "
        f"for its prompt: {why}"
        for p, why in list(failed.items())[:ERRORS_SHOWN]
    ]
    more = len(failed) - ERRORS_SHOWN
    return (
        f"{len(failed)} prompt(s) got no question set, nothing was written: {'; '.join(parts)}"
        + (f"; and {more} more" if more > 0 else "")
        + f" ({kept} question sets are in the rubric cache: run again to ask for the others)"
    )


# ---- the file ----
