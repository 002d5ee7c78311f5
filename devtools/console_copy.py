"""A console example's copy button copies its commands alone, without the `$ ` prompts or the
output shown, so what is pasted runs. Material copies the text of a block's `data-copy`."""

from __future__ import annotations

import html
import re

BLOCK = re.compile(
    r'<div class="language-console highlight"(?P<attrs>[^>]*)>(?P<body>.*?</code></pre>)',
    re.DOTALL,
)
TAG = re.compile(r"<[^>]+>")
PROMPT = "$ "


def commands(text: str) -> str:
    """The commands of a console session: each `$ ` line without its prompt, with the lines a
    trailing backslash continues it on; every other line is output and left out."""
    kept: list[str] = []
    joining = False
    for line in text.splitlines():
        if joining:
            kept.append(line)
        elif line.startswith(PROMPT):
            kept.append(line[len(PROMPT) :])
        else:
            continue
        joining = line.rstrip().endswith("\\")
    return "\n".join(kept)


def with_copy_text(page_html: str) -> str:
    """The page with each console block given its commands as the text its button copies."""

    def copyable(block: re.Match[str]) -> str:
        if "data-copy=" in block.group("attrs"):
            return block.group(0)
        text = html.unescape(TAG.sub("", block.group("body")))
        copy = html.escape(commands(text), quote=True)
        return (
            f'<div class="language-console highlight"{block.group("attrs")} data-copy="{copy}">'
            f"{block.group('body')}"
        )

    return BLOCK.sub(copyable, page_html)
