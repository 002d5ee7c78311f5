"""The seam between the fake server's HTTP layer and the brain that writes reply text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

# Replies of the simulated judge carry evalq.core.judge.SIMULATED_MODEL_VERSION (in the domain, where
# the runtime reads it: the runtime never imports the fake server); scripted replies this one.
SCRIPTED_MODEL_VERSION = "evalq-fake-gemini/scripted"


@dataclass(frozen=True)
class FakeMedia:
    mime_type: str
    data: bytes | None = None  # inline bytes (already base64-decoded)
    uri: str | None = None  # file_data reference


@dataclass(frozen=True)
class FakeRequest:
    model: str
    text: str  # all text parts (system instruction first), joined with newlines
    media: list[FakeMedia] = field(default_factory=list)
    response_schema: dict[str, Any] | None = None  # responseSchema or responseJsonSchema as sent
    temperature: float | None = None
    max_output_tokens: int | None = None
    thinking_budget: int | None = None  # generationConfig.thinkingConfig, as sent
    thinking_level: str | None = None
    system: str = ""  # the systemInstruction's text parts, joined with newlines

    @property
    def user_text(self) -> str:
        """The contents' text alone, without the system instruction."""
        if self.system and self.text.startswith(self.system + "\n"):
            return self.text[len(self.system) + 1 :]
        return self.text


class Brain(Protocol):
    def reply(self, request: FakeRequest) -> str:
        """Return the reply text (JSON text when a response schema was asked for)."""
        ...
