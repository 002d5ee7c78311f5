"""The sizes a dataset and its rows may reach before a job is stored, and the wording of a refusal:
a job is stored whole in Redis and every row becomes at least one task, so a shared cluster
needs an upper end on what one submit may put there."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields

from evalq.core.errors import DatasetError

# The default size limit per field (a cell, or a JSON value measured as JSON).
MAX_FIELD_BYTES = 1024 * 1024
# A row's fields together, names included: else sixty 1 MiB fields would be stored whole.
MAX_ROW_BYTES = 4 * 1024 * 1024
# Hand-written questions per row, each one judge call per judge: as many as a generated rubric
# may hold (evalq.metrics.gecko.rubric.MAX_RUBRIC_QUESTIONS).
MAX_QUESTIONS_PER_ROW = 100
MAX_DATASET_BYTES = 1024**3
MAX_ROWS_PER_JOB = 1_000_000
MAX_CSV_COLUMNS = 1000

# How many names a message lists, and how much of each: a warning or an error is stored with
# the job, so it must not grow with the dataset (a CSV of 100k columns made a 19.8 MB config).
NAMES_SHOWN = 20
NAME_CHARS = 60
MAX_MESSAGE_CHARS = 2000


@dataclass(frozen=True)
class InputBounds:
    """What one submit may hold: bounds on a row fail that row alone (input_error), bounds on
    the dataset refuse it before anything is written. Field names are the settings' names
    without EVALQ_; the client passes the values in, as the domain reads no settings."""

    max_field_bytes: int = MAX_FIELD_BYTES
    max_row_bytes: int = MAX_ROW_BYTES
    max_questions_per_row: int = MAX_QUESTIONS_PER_ROW
    max_dataset_bytes: int = MAX_DATASET_BYTES
    max_rows_per_job: int = MAX_ROWS_PER_JOB
    max_csv_columns: int = MAX_CSV_COLUMNS

    def __post_init__(self) -> None:
        # A bound of 0 or a non-number would refuse every row with a puzzling message; an
        # explicit submit argument is checked here as the settings check their own.
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise DatasetError(
                    f"{item.name} must be a whole number of 1 or more, not {value!r}"
                )

    def over(self, name: str, unit: str) -> str:
        """The tail of a refusal: the bound's value and where to change it."""
        return f"over the limit of {getattr(self, name):,} {unit} ({setting_of(name)})"


def setting_of(name: str) -> str:
    return f"EVALQ_{name.upper()}"


def short(text: str, chars: int = NAME_CHARS) -> str:
    """A name as a message shows it: at most ``chars`` characters, saying how many were cut."""
    if len(text) <= chars:
        return repr(text)
    return f"{text[:chars]!r}... ({len(text) - chars:,} more characters)"


def some_names(names: Iterable[str], most: int = NAMES_SHOWN) -> str:
    """At most ``most`` names, each shortened, then how many more there are."""
    listed = list(names)
    shown = ", ".join(short(n) for n in listed[:most])
    return shown + (f" and {len(listed) - most:,} more" if len(listed) > most else "")


def clip(text: str, chars: int = MAX_MESSAGE_CHARS) -> str:
    """A warning as it is stored with the job: at most ``chars`` characters."""
    if len(text) <= chars:
        return text
    return f"{text[:chars]}... ({len(text) - chars:,} more characters)"
