"""MkDocs hook (mkdocs.yml, `hooks:`): the reference pages whose text is made from the code at
build time, so the settings, the Redis keys and the archive's schema in the manual are the
ones in the code on the day it was built."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

# MkDocs loads this file by its path; devtools/ is the checkout's tooling, not installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devtools.console_copy import with_copy_text
from devtools.reference import archive_page, cli_page, keys_page, settings_page

GENERATORS: dict[str, Callable[[], str]] = {
    "settings": settings_page.markdown,
    "redis-keys": keys_page.markdown,
    "archive-schema": archive_page.markdown,
    "cli": cli_page.markdown,
}
# Where each generated text must appear (paths under docs/).
PAGES = {
    "reference/settings.md": "settings",
    "reference/redis-keys.md": "redis-keys",
    "reference/archive-schema.md": "archive-schema",
    "reference/cli.md": "cli",
}
MARKER = re.compile(r"<!--\s*generated:\s*([\w-]+)\s*-->")


def expand(markdown: str, src_uri: str) -> str:
    """The page's Markdown with each marker (`<!-- generated: NAME -->`) replaced by its
    generator's text. A marker naming no generator, or a generated page that lost its marker,
    fails the build: a reference missing from the site is an error, not a blank page."""
    wanted = PAGES.get(src_uri)
    found = MARKER.findall(markdown)
    if wanted is not None and wanted not in found:
        raise PluginError(f"{src_uri} lacks its marker <!-- generated: {wanted} -->")
    unknown = sorted(set(found) - set(GENERATORS))
    if unknown:
        raise PluginError(f"{src_uri}: no generator for {', '.join(unknown)}")
    return MARKER.sub(lambda match: GENERATORS[match.group(1)](), markdown)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return expand(markdown, page.file.src_uri)


def versioned(copyright: str | None) -> str:
    """The footer's line, naming the release the manual was built from."""
    from evalq import __version__

    return f"evalq {__version__}" + (f" · {copyright}" if copyright else "")


def on_config(config: Any, **_: Any) -> Any:
    config["copyright"] = versioned(config.get("copyright"))
    return config


def on_page_content(html: str, **_: Any) -> str:
    return with_copy_text(html)
