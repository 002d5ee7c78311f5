"""What the rating metrics' plugins share: a row is read by the job's template (the columns it
knows, the prompt's other names under a built-in rubric), and the dataset is checked against it
before anything is enqueued. Pointwise, pairwise and rank say which template kind they use and,
where they read more than the template, which columns a row may and must have."""

from __future__ import annotations

from evalq.core.label_reading import HumanLabels
from evalq.core.media import MediaPlace
from evalq.core.metric import Judged, Options, Record
from evalq.core.models import RowInput, RowResult
from evalq.metrics.ratings.columns import read_row
from evalq.metrics.ratings.judging import TemplateKind, check_template
from evalq.metrics.ratings.templates import resolve_template


class RatingMetric:
    """parse_row and check for a metric rated on a template (rubric or user file), and what
    its judge was shown of a row."""

    template_kind: TemplateKind
    candidate_field: str | None = None  # no --candidates cells, unless a metric says
    own_candidates = False
    shows_media = False  # a document or image is named beside the texts, not shown
    human_labels = HumanLabels()

    def refusal(self, options: Options, judges: list[str], vertexai: bool) -> str | None:
        return None  # every judge model rates

    def judged_responses(self, row: RowInput, result: RowResult) -> Judged:
        """The response(s) the judge rated or compared, by column (each metric's own)."""
        raise NotImplementedError

    def judged_inputs(self, row: RowInput, result: RowResult) -> Judged:
        """The prompt, the template's other columns and the document, then the response(s):
        a rating prompt shows every column the row was read with."""
        responses = self.judged_responses(row, result)
        out: Judged = {}
        if isinstance(row.data.get("prompt"), str):
            out["prompt"] = row.data["prompt"]
        for key, value in row.data.items():
            if key not in responses and key not in out and isinstance(value, str):
                out[key] = value
        out.update(row.media)
        out.update(responses)
        return out

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
