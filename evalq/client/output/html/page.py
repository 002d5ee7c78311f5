"""How every evalq HTML page (report, comparison, calibration) is rendered.

Everything from a dataset or a judge is untrusted, so autoescaping is on for every template
string, page by page alike. A page's helpers (its formatters, colours and CSS, the same on
every render) are the environment's globals, visible to its macros too; what one render shows
is passed as its data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def render_page(template: str, helpers: Mapping[str, Any], **data: Any) -> str:
    from jinja2 import Environment, select_autoescape  # only a page needs Jinja

    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    env.globals.update(helpers)
    return env.from_string(template).render(**data)


__all__ = ["render_page"]
