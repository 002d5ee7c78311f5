"""A metric's options as a typed model: what `evalq run` offers as flags, what the Python API
checks, what the dry run reads. Each metric declares it in a light module of its own
(evalq/metrics/*/options.py), so the command line builds its flags without a metric's code."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo

from evalq.core.registry import metrics


@dataclass(frozen=True)
class Flag:
    """A field `evalq run` and `evalq rank` offer as --NAME (underscores become dashes).

    ``file="text"``: the flag names a file whose text is stored (read by the client, so workers
    on other hosts need no copy). ``file="text-or-name"``: a file's text goes into
    ``text_into`` and its name into the field; a value that names no file is stored as given.
    ``listing``: the values the metric offers, (value, what it is), which the command's help
    lists under ``listing_title`` (a rating metric's built-in templates).
    """

    help: str
    file: Literal["text", "text-or-name"] | None = None
    text_into: str | None = None
    listing: tuple[tuple[str, str], ...] = ()
    listing_title: str = ""


class MetricOptions(BaseModel):
    """Options every metric may be given. Values are checked strictly (no "3" for 3), so the
    stored dict is what was given; an option the metric's model does not declare is refused
    (refuse_undeclared), never stored and ignored."""

    model_config = ConfigDict(extra="forbid", strict=True)

    candidates: list[str] | str | None = None  # several models in one job (--candidates)
    # The dataset column holding a rater's label for the row, so the summary can say how well
    # the judge agrees with people (evalq.core.human.agreement); kept in each row's extra.
    human: Annotated[
        str | None,
        Flag(
            "A column with a human rating or label per row (a number, yes/no, or for "
            "pairwise the preferred side): the summary gives the judge's agreement with it."
        ),
    ] = None


def options_model(metric: str) -> type[MetricOptions]:
    """The options model of a metric (MetricOptions for one that declares none)."""
    entry = metrics().get(metric)
    if entry is None:
        return MetricOptions
    module, attribute = entry.options.split(":")
    model: type[MetricOptions] = getattr(importlib.import_module(module), attribute)
    return model


def flag_of(info: FieldInfo) -> Flag | None:
    return next((m for m in info.metadata if isinstance(m, Flag)), None)


def flag_fields() -> Iterator[tuple[str, FieldInfo, Flag]]:
    """Every field offered as a flag, over all metrics in registry order, each once (the
    first model that declares it says its type and help)."""
    seen: set[str] = set()
    for metric in metrics():
        for name, info in options_model(metric).model_fields.items():
            flag = flag_of(info)
            if flag is not None and name not in seen:
                seen.add(name)
                yield name, info, flag


def problem(error: Mapping[str, Any]) -> str:
    """One validation error in the words the command line has always used."""
    context = error.get("ctx") or {}
    if error["type"] == "greater_than_equal":
        return f"must be at least {context['ge']}"
    return f"{error['msg']}, got {error['input']!r}"


def validate_options(metric: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The options checked against the metric's model, as the dict a job stores (the model's
    dump without unset fields: workers and metrics read a Mapping and check what only they can);
    a bad one is a DatasetError naming the metric and the option."""
    model = options_model(metric)
    refuse_undeclared(metric, options or {})
    try:
        checked = model.model_validate(dict(options or {}))
    except ValidationError as exc:
        from evalq.core.errors import DatasetError

        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(options)"
        raise DatasetError(f"{metric}: option {field}: {problem(first)}") from None
    return checked.model_dump(exclude_unset=True)


def flag_of_field(model: type[MetricOptions], name: str) -> Flag | None:
    info = model.model_fields.get(name)
    return None if info is None else flag_of(info)


def refuse_undeclared(metric: str, options: Mapping[str, Any]) -> None:
    """An option the metric's model does not declare is refused in one line naming the
    metric and what it takes: kept, it was stored and silently ignored (`evalq run pointwise
    --validator batched` planned a job as if the flag meant something). One another metric
    takes is named with that metric."""
    model = options_model(metric)
    foreign = [key for key in options if key not in model.model_fields]
    if not foreign:
        return
    from evalq.core.errors import DatasetError

    own = sorted(
        flag_name(name) for name, info in model.model_fields.items() if flag_of(info) is not None
    )
    offered = {name for name, _, _ in flag_fields()}
    flags = [k for k in foreign if k in offered]
    others = [m for m in metrics() if any(flag_of_field(options_model(m), k) for k in flags)]
    said = [flag_name(k) if k in offered else f"the option {k!r}" for k in foreign]
    whose = f" (options of {', '.join(others)})" if others else ""
    raise DatasetError(
        f"{metric} does not take {', '.join(said)}{whose}; {metric} takes "
        f"{', '.join(own) or 'no metric options'}"
    )


def flag_name(field: str) -> str:
    """A field's command-line flag (underscores become dashes)."""
    return "--" + field.replace("_", "-")
