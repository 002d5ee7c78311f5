"""How every evalq HTML page (report, comparison, calibration) is rendered. Everything from a
dataset or a judge is untrusted, so autoescaping is on for every template string."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def render_page(template: str, helpers: Mapping[str, Any], **data: Any) -> str:
    """`template` rendered with `data`; `helpers` (formatters, colours, CSS, the same on every
    render) are the environment's globals, so its macros see them too."""
    from jinja2 import Environment, select_autoescape  # only a page needs Jinja

    env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    env.globals.update(helpers)
    return env.from_string(template).render(**data)


__all__ = ["render_page"]
