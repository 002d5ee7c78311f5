"""The rich console every command prints through (evalq.client.cli.common's err_console and
out_console), with a last guard for the terminal.

Every printer passes the user's and the judge's text through
evalq.client.output.terminal.visible first (`shown` for rich), which keeps tables aligned and one-line messages on one line. This console
makes sure of it where a printer forgot: the text it is about to write (everything but rich's
own control codes, which move the cursor for the progress bar, and its styles, which are
applied around the text) goes through `visible` once more, line breaks kept. On text already
shown it changes nothing."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rich.console import Console
from rich.segment import Segment

from evalq.client.output.terminal.visible import visible


def _guarded(buffer: Iterable[Segment]) -> Iterator[Segment]:
    for segment in buffer:
        text, style, control = segment
        if control or (text.isascii() and text.isprintable()) or text == "\n":
            yield segment
        else:
            yield Segment(visible(text, multiline=True), style, control)


class TerminalConsole(Console):
    """rich's Console, sending no control character it did not make itself."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # Every write of a console goes through here once its segments are laid out.
        return super()._render_buffer(_guarded(buffer))
