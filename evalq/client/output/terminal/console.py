"""The rich console every command prints through, with a last guard for the terminal: what a
printer forgot to pass through evalq.client.output.terminal.visible goes through it here."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rich.console import Console
from rich.segment import Segment

from evalq.client.output.terminal.visible import visible


def _guarded(buffer: Iterable[Segment]) -> Iterator[Segment]:
    """Text through `visible` once more, line breaks kept; rich's control codes (the progress
    bar's cursor moves) pass, and styles are applied around the text. Shown text is unchanged."""
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

    def on_broken_pipe(self) -> None:
        # The reader left (`evalq status X | head`): not a failure of the command. rich would
        # exit 1, the code --fail-under gives a threshold not met; evalq.client.cli ends it.
        self.quiet = True
        raise BrokenPipeError
