"""The file `evalq rubrics` writes: every record of the dataset with a `questions` column as the
loader reads it, JSONL or CSV. Relative local media paths are rewritten to name the same files
from the file's folder, and the `--data-root` folders the run needs are returned."""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalq.core.column_map import header_columns
from evalq.core.dataset import LoadedDataset
from evalq.core.errors import DatasetError
from evalq.core.media import MediaRules
from evalq.core.metric import get_metric
from evalq.core.models import Rubric
from evalq.core.records import records
from evalq.core.row_questions import question_items
from evalq.worker.settings import Settings


def write_file(
    source: Path,
    target: Path,
    metric: str,
    loaded: LoadedDataset,
    rubrics: Mapping[str, Rubric],
    renames: Mapping[str, str],
    rules: MediaRules,
    settings: Settings,
) -> tuple[int, list[str]]:
    """Every record of `source` with its questions, to `target`; returns (relative media
    paths rewritten, the --data-root folders the run needs). CSV cells are written as read, with
    no formula escaped: an escaped prompt would be another prompt, under another rubric."""
    by_line = {row.line: row for row in loaded.rows}
    spec = get_metric(metric)
    header = header_columns(spec.required_columns, renames)
    column = renames.get("questions", "questions")
    as_csv = target.suffix.lower() == ".csv"
    moved = target.parent.resolve() != source.parent.resolve()
    rewritten = 0
    local: list[Path] = []
    out: list[dict[str, Any]] = []
    for number, read in records(source, header, []):
        if not isinstance(read, dict) or number not in by_line:
            raise DatasetError(f"{source}: line {number} was not read as a row")
        row = by_line[number]
        record = dict(read)
        for field_name, ref in row.media.items():
            if ref.kind != "path":
                continue
            local.append(Path(ref.value))
            name = renames.get(field_name, field_name)
            if moved and name in record:
                record[name], changed = _moved_cell(record[name], source.parent, target.parent)
                rewritten += changed
        if not row.questions:
            items = question_items(rubrics[row.prompt].questions)
            record[column] = json.dumps(items, ensure_ascii=False) if as_csv else items
        out.append(record)
    _save(target, out, as_csv)
    return rewritten, _roots_needed(local, target, rules, settings)


def _relative(text: str) -> bool:
    return bool(text) and not Path(text).expanduser().is_absolute() and "://" not in text


def _moved_cell(cell: Any, was: Path, now: Path) -> tuple[Any, int]:
    """A media cell whose relative path names the same file from `now` as it did from `was`
    (a content form's file_uri too); (cell, how many paths changed)."""
    if isinstance(cell, str):
        text = cell.strip()
        if text.startswith("{"):
            try:
                form = json.loads(text)
            except json.JSONDecodeError:
                return cell, 0
            moved, count = _moved_cell(form, was, now)
            return (json.dumps(moved, ensure_ascii=False), count) if count else (cell, 0)
        if text.startswith(("gs://", "data:")) or not _relative(text):
            return cell, 0
        return os.path.relpath(os.path.normpath(was.resolve() / text), now.resolve()), 1
    if isinstance(cell, dict):
        count, out = 0, {}
        for key, value in cell.items():
            out[key] = value
            if isinstance(value, (dict, list)) or (
                key in ("file_uri", "fileUri") and isinstance(value, str)
            ):
                out[key], n = _moved_cell(value, was, now)
                count += n
        return out, count
    if isinstance(cell, list):
        count, items = 0, []
        for item in cell:
            moved, n = _moved_cell(item, was, now) if isinstance(item, (dict, list)) else (item, 0)
            items.append(moved)
            count += n
        return items, count
    return cell, 0


def _roots_needed(
    local: list[Path], target: Path, rules: MediaRules, settings: Settings
) -> list[str]:
    """The folders a run of `target` must be allowed to read its local media from: none when
    they are all under its folder (the run's default root) or EVALQ_DATA_ROOTS names them."""
    from evalq.core.data_roots import DataRoots

    if settings.data_roots or not local:
        return []
    if all(DataRoots.of([target.parent]).allows(p) for p in local):
        return []
    return [str(root) for root in rules.roots.roots if any(_under(p, root) for p in local)]


def _under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _save(target: Path, records_out: list[dict[str, Any]], as_csv: bool) -> None:
    """The records written whole or not at all (a temporary file renamed over the target)."""
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with open(fd, "w", encoding="utf-8", newline="" if as_csv else None) as handle:
            if as_csv:
                names = list(dict.fromkeys(k for record in records_out for k in record))
                writer = csv.DictWriter(handle, fieldnames=names)
                writer.writeheader()
                for record in records_out:
                    writer.writerow({k: "" if v is None else v for k, v in record.items()})
            else:
                for record in records_out:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        mask = os.umask(0)  # mkstemp makes it private; a file written here is not
        os.umask(mask)
        os.chmod(name, 0o666 & ~mask)
        os.replace(name, target)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
