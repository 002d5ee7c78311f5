"""A setting refused as one line: its variable, what it got (secrets masked) and the forms it
takes, read off the settings object itself, so that a typo in the environment reads as its fix
and never as a traceback."""

from __future__ import annotations

import os
import re
import types
import typing
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal

from annotated_types import Ge, Gt

from evalq.core.secret_urls import MASK, mask_url, scrub

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic.fields import FieldInfo

# pydantic's own refusals of a value's type or bound: the forms say it better.
GENERIC = re.compile(r"(int|float|bool|literal|string|dict|tuple|list)_\w+|greater_than\w*")
# A key's shape: Google's (AIza...), or a long run of letters and digits mixing cases (a token,
# not a word or a path, whose parts a / or a . would split).
KEY_LIKE = re.compile(r"AIza[0-9A-Za-z_-]{20,}|[A-Za-z0-9_\-+=]{32,}")
JSON_EXAMPLE = re.compile(r"`(\{.*?\}|\[.*?\])`", re.S)
SHOWN_MAX = 80  # characters of a value quoted back
# The settings read from text by a validator of their own (NoDecode), whose type says little.
LISTS = {
    "data_roots": f"folders separated by {os.pathsep!r}, or a JSON list of folders",
    "media_allow_networks": "networks in CIDR form, comma-separated (10.1.2.0/24,fd00::/8)",
    "gcs_media": "gs://BUCKET or gs://BUCKET/FOLDER/, comma-separated",
}


def masked(value: object, secret: bool = False) -> str:
    """A value as a refusal may quote it: a URL's password and anything key-like masked; a
    secret setting's value masked whole unless it is a URL (whose host tells it apart)."""
    text = value if isinstance(value, str) else repr(value)
    if "://" in text:
        text = mask_url(text)
    elif secret:
        return MASK
    text = KEY_LIKE.sub(lambda m: MASK if _key_like(m.group(0)) else m.group(0), text)
    return text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 1] + "…"


def _key_like(token: str) -> bool:
    mixed = any(c.islower() for c in token) and any(c.isupper() for c in token)
    return token.startswith("AIza") or (mixed and any(c.isdigit() for c in token))


def forms(name: str, info: FieldInfo) -> str | None:
    """What a setting takes, from its type, its bounds and (a JSON one) the example its
    docstring gives."""
    if name in LISTS:
        return LISTS[name]
    kind = info.annotation
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        kind = next((a for a in args if a is not type(None)), kind)
        args = typing.get_args(kind)
    if typing.get_origin(kind) is Literal:
        return "one of " + ", ".join(str(a) for a in args)
    if kind is bool:
        return "true or false (also 1/0, yes/no, on/off)"
    if kind in (int, float):
        number = "a whole number" if kind is int else "a number"
        for bound in info.metadata:
            if isinstance(bound, Gt):
                return f"{number} above {bound.gt}"
            if isinstance(bound, Ge):
                return f"{number} of {bound.ge} or more"
        return number
    if typing.get_origin(kind) is dict:
        example = JSON_EXAMPLE.search(info.description or "")
        shown = " ".join(example.group(1).split()) if example else "{...}"
        return f"a JSON object, e.g. {shown}"
    return None


def problem_lines(
    error: ValidationError,
    fields: Mapping[str, FieldInfo],
    variable: typing.Callable[[str], str],
    secret_fields: Iterable[str],
    secrets: Iterable[str | None],
) -> list[str]:
    """One line per refused setting: `VARIABLE: got 'VALUE': why; it takes FORMS`. The value is
    left out where the reason quotes it already; pydantic's generic reasons give way to the
    forms."""
    secret_fields = set(secret_fields)
    urls = list(secrets)
    by_alias = {alias: field for field, info in fields.items() for alias in _aliases(info)}
    lines = []
    for item in error.errors(include_url=False):
        loc = [str(part) for part in item["loc"]]
        field = by_alias.get(loc[0], loc[0]) if loc else ""
        name = variable(field) if field else ""
        message = str(item["msg"]).removeprefix("Value error, ")
        message = message.removeprefix(f"{name}: ") if name else message
        info = fields.get(field)
        takes = forms(field, info) if info is not None else None
        if takes and len(loc) == 1 and GENERIC.fullmatch(str(item["type"])):
            message = ""
        parts = [name + (f" ({'.'.join(loc[1:])})" if len(loc) > 1 else "")] if name else []
        if "input" in item and name:
            key = field in secret_fields and not field.endswith("_url")  # a URL masks itself
            got = masked(item["input"], secret=key)
            quoted = re.findall(r"'([^']+)'", message)  # the reason names the bad part
            if not any(part in got for part in quoted):
                parts.append(f"got {got!r}")
        if message:
            parts.append(message)
        line = ": ".join(parts)
        if takes and "it takes" not in line and "give " not in line:
            line += f"; it takes {takes}"
        lines.append(scrub(line, *urls))
    return lines


def _aliases(info: FieldInfo) -> list[str]:
    alias = info.validation_alias
    if isinstance(alias, str):
        return [alias]
    return [str(choice) for choice in getattr(alias, "choices", ())]


def parse_problem(
    exc: Exception, fields: Mapping[str, FieldInfo], variable: typing.Callable[[str], str]
) -> str | None:
    """pydantic-settings' refusal of a JSON setting that is not JSON (it raises before any
    check, naming only the field) as one line; None for any other error."""
    found = re.search(r'error parsing value for field "(\w+)"', str(exc))
    if found is None or found.group(1) not in fields:
        return None
    field = found.group(1)
    name = variable(field)
    raw = next((v for k, v in os.environ.items() if k.upper() == name.upper()), None)
    cause = exc.__cause__
    why = f"not JSON ({cause})" if cause is not None else "not JSON"
    got = f"got {masked(raw)!r}: " if raw is not None else ""
    takes = forms(field, fields[field])
    return f"{name}: {got}{why}" + (f"; it takes {takes}" if takes else "")
