"""What the rating metrics' plugins share: a row is read by the job's template (the columns it
knows, the prompt's other names under a built-in rubric), and the dataset is checked against it
before anything is enqueued. Pointwise, pairwise and rank say which template kind they use and,
where they read more than the template, which columns a row may and must have."""

from __future__ import annotations

from evalq.core.media import MediaPlace
from evalq.core.metric import Options, Record
from evalq.core.models import RowInput
from evalq.metrics.ratings.columns import read_row
from evalq.metrics.ratings.judging import TemplateKind, check_template
from evalq.metrics.ratings.templates import resolve_template


class RatingMetric:
    """parse_row and check for a metric rated on a template (rubric or user file)."""

    template_kind: TemplateKind

    def row_columns(
        self, number: int, record: Record, options: Options
    ) -> tuple[frozenset[str], tuple[str, ...]]:
        """(the columns a row may have, those it must): the template's, none required."""
        return resolve_template(options, self.template_kind).columns, ()

    def parse_row(
        self, number: int, record: Record, place: MediaPlace, options: Options, warnings: list[str]
    ) -> RowInput:
        template = resolve_template(options, self.template_kind)
        known, required = self.row_columns(number, record, options)
        return read_row(
            number,
            record,
            place,
            known,
            required=required,
            prompt_aliases=template.rubric is not None,
        )

    def check(self, rows: list[RowInput], options: Options) -> list[str]:
        return check_template(options, rows, self.template_kind)
