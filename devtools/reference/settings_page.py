"""The settings reference (docs/reference/settings.md): every field of Settings with the
environment variables that set it, its default and its meaning, read from the model itself so
the manual shows what the code reads."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices
from pydantic.fields import FieldInfo

from devtools.reference.markdown_cells import cell, table
from evalq.worker.settings import Settings

_SECONDS_NAMED = {3600: "hour", 24 * 3600: "day"}
_BYTES_NAMED = {1024**3: "GiB", 1024**2: "MiB"}


def env_names(name: str, field: FieldInfo) -> list[str]:
    """The variables pydantic-settings reads for a field: its aliases when it has them (the
    credentials keep google-genai's names), else EVALQ_ and the field's name."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    if isinstance(alias, str):
        return [alias]
    prefix = str(Settings.model_config.get("env_prefix", ""))
    return [f"{prefix}{name}".upper()]


def shown_default(name: str, field: FieldInfo) -> str:
    """The default as a person sets it: JSON-ish literals, and a size or a duration also in
    MiB or days when it is a round number of them."""
    value: Any = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value in ((), {}, []):
        return "unset" if isinstance(value, tuple) else f"`{value}`"
    text = f"`{value:g}`" if isinstance(value, float) else f"`{value}`"
    if isinstance(value, int) and name.endswith("_bytes"):
        for unit, label in _BYTES_NAMED.items():
            if value >= unit and value % unit == 0:
                return f"{text} ({value // unit} {label})"
    if isinstance(value, int | float) and name.endswith("_s"):
        for unit, label in sorted(_SECONDS_NAMED.items(), reverse=True):
            if value >= unit and value % unit == 0:
                count = int(value // unit)
                return f"{text} ({count} {label}{'s' if count > 1 else ''})"
    return text


def rows() -> list[tuple[str, str, str]]:
    out = []
    for name, field in Settings.model_fields.items():
        if not field.description:
            raise ValueError(f"Settings.{name} has no docstring: say what it means")
        names = " / ".join(f"`{env}`" for env in env_names(name, field))
        out.append((names, shown_default(name, field), cell(field.description)))
    return out


def markdown() -> str:
    return table(("variable", "default", "meaning"), rows())
