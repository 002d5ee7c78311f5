"""The settings reference (docs/reference/settings.md): a section a reader can link to for each
field of Settings, with its variables, default, type and meaning, read from the model itself so
the manual shows what the code reads."""

from __future__ import annotations

from typing import Any, Literal, get_args, get_origin

from pydantic import AliasChoices, SecretStr
from pydantic.fields import FieldInfo

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


def shown_type(field: FieldInfo) -> str:
    """The kind of value the variable takes, in the words of someone setting it."""
    annotation = field.annotation
    optional = type(None) in get_args(annotation)
    inner = [a for a in get_args(annotation) if a is not type(None)] if optional else [annotation]
    kind = inner[0] if len(inner) == 1 else annotation
    origin = get_origin(kind)
    if kind is bool:
        text = "`true` or `false`"
    elif kind is int:
        text = "integer"
    elif kind is float:
        text = "number"
    elif kind is str:
        text = "text"
    elif kind is SecretStr:
        text = "secret text"
    elif origin is Literal:
        text = "one of " + ", ".join(f"`{choice}`" for choice in get_args(kind))
    elif origin is tuple:
        text = "comma-separated list"
    elif origin is dict:
        text = "JSON object"
    else:
        text = str(kind)
    return text + (", optional" if optional else "")


def anchor(env: str) -> str:
    """The link to a setting: its variable in lower case (`settings/#evalq_redis_url`)."""
    return env.lower()


def section(name: str, field: FieldInfo) -> str:
    if not field.description:
        raise ValueError(f"Settings.{name} has no docstring: say what it means")
    names = env_names(name, field)
    heading = " / ".join(f"`{env}`" for env in names)
    return "\n".join(
        [
            f"## {heading} {{ #{anchor(names[0])} }}",
            "",
            " ".join(field.description.split()),
            "",
            f"- Default: {shown_default(name, field)}",
            f"- Type: {shown_type(field)}",
            "",
        ]
    )


def markdown() -> str:
    """A section per setting, in the settings object's order: a heading and anchor to link to,
    what it does, its default and the kind of value it takes."""
    return "\n".join(section(name, field) for name, field in Settings.model_fields.items())
