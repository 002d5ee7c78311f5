"""What a rating job judges with: a built-in rubric, or a user template, a text file whose
{placeholders} name dataset columns; evalq wraps either in the same frame (data rule,
explanation first, structured answer) so the reply is read the same way.

The frame versions are part of each prompt's identity, so bump one whenever its wording changes.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from evalq.core.errors import DatasetError
from evalq.metrics.ratings.rubrics import BUILTIN_RUBRICS, RatingRubric, builtin_rubric

# The frames these versions name are worded in evalq.metrics.ratings.prompts.
# /2: the data rule every metric states, with one sentence on attached files.
POINTWISE_FRAME_VERSION = "pointwise-frame/2"
PAIRWISE_FRAME_VERSION = "pairwise-frame/2"
DEFAULT_PAIRWISE_RUBRIC = "question_answering_quality"

_RESPONSE_COLUMNS = frozenset({"response", "response_a", "response_b"})


@dataclass(frozen=True)
class Template:
    """What a job judges with: a built-in rubric, or a user's text with {placeholders}."""

    name: str
    version: str
    kind: Literal["pointwise", "pairwise"]
    rubric: RatingRubric | None = None
    text: str | None = None
    placeholders: tuple[str, ...] = ()

    @property
    def requires(self) -> tuple[tuple[str, ...], ...]:
        """Groups of dataset columns, each needing one present; in a pairwise template the
        responses are the metric's to supply, not the template's."""
        if self.rubric is not None:
            groups = self.rubric.requires
        else:
            groups = tuple((p,) for p in self.placeholders)
        if self.kind == "pairwise":
            return tuple(g for g in groups if not set(g) & _RESPONSE_COLUMNS)
        return groups

    @property
    def columns(self) -> frozenset[str]:
        """The dataset columns the template reads (besides the responses a pairwise metric
        supplies)."""
        if self.rubric is not None:
            columns = frozenset(spec.column for spec in self.rubric.inputs)
        else:
            columns = frozenset(self.placeholders)
        return columns - _RESPONSE_COLUMNS if self.kind == "pairwise" else columns


def placeholders_of(text: str, source: str = "the template") -> tuple[str, ...]:
    """The {names} a user template uses, in order; literal braces are written {{ and }}."""
    names: list[str] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise DatasetError(
            f"{source}: bad braces: {exc} (write a literal brace as {{{{ or }}}})"
        ) from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            shown = (
                "{"
                + name
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
                + "}"
            )
            raise DatasetError(
                f"{source}: placeholder {shown} must be a plain column name such as {{response}}"
            )
        if name not in names:
            names.append(name)
    if not names:
        raise DatasetError(f"{source}: it names no column; use placeholders such as {{response}}")
    return tuple(names)


def _user_template(
    options: Mapping[str, Any], text: str, kind: Literal["pointwise", "pairwise"], frame: str
) -> Template:
    name = str(options.get("template") or "user template")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return Template(
        name=name,
        version=f"{frame}+user:{digest}",
        kind=kind,
        text=text,
        placeholders=placeholders_of(text, f"template {name}"),
    )


def resolve_template(
    options: Mapping[str, Any], kind: Literal["pointwise", "pairwise"]
) -> Template:
    """The job's template from options["template_text"] (a file) or options["template"]."""
    frame = POINTWISE_FRAME_VERSION if kind == "pointwise" else PAIRWISE_FRAME_VERSION
    text = options.get("template_text")
    if isinstance(text, str):
        template = _user_template(options, text, kind, frame)
        if kind == "pairwise":
            lacking = [p for p in ("response_a", "response_b") if p not in template.placeholders]
            if lacking:
                raise DatasetError(
                    f"template {template.name}: a pairwise template must show both responses; "
                    f"it lacks {', '.join('{' + p + '}' for p in lacking)}"
                )
        return template
    name = options.get("template")
    if name is None and kind == "pairwise":
        name = DEFAULT_PAIRWISE_RUBRIC
    if not isinstance(name, str) or not name:
        raise DatasetError(
            f"choose a template: --template NAME (built-in: {', '.join(BUILTIN_RUBRICS)}) "
            "or --template FILE"
        )
    rubric = builtin_rubric(name, kind)
    return Template(name=rubric.name, version=f"{frame}+{rubric.version}", kind=kind, rubric=rubric)
