"""The seam between the fake server's HTTP layer and the brain that writes reply text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from evalq.fake_gemini.vision import Scene

# Replies of the simulated judge carry evalq.core.judge.SIMULATED_MODEL_VERSION (in the domain, where
# the runtime reads it: the runtime never imports the fake server); scripted replies this one.
SCRIPTED_MODEL_VERSION = "evalq-fake-gemini/scripted"

JsonObject = dict[str, Any]  # a JSON body as the wire carries it


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
    include_thoughts: bool = False  # thinkingConfig.includeThoughts: thought summaries asked for
    system: str = ""  # the systemInstruction's text parts, joined with newlines
    response_logprobs: bool = False  # generationConfig.responseLogprobs
    logprobs: int | None = None  # generationConfig.logprobs: top candidates per token
    seed: int | None = None  # generationConfig.seed: evalq sends a sample's index

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


class SeesImages(Protocol):
    """What a skill may ask of the judge it serves: the analysed scene of a request's image."""

    def scene_for(self, media: list[FakeMedia]) -> Scene: ...


def schema_properties(schema: dict[str, Any] | None) -> set[str]:
    """The lower-cased property names of a response schema (followed through one $ref): how
    a skill recognises the requests of its metric."""
    if not isinstance(schema, dict):
        return set()
    properties = schema.get("properties")
    definitions = schema.get("$defs")
    if properties is None and isinstance(schema.get("$ref"), str) and isinstance(definitions, dict):
        target = definitions.get(schema["$ref"].rsplit("/", 1)[-1])
        properties = target.get("properties") if isinstance(target, dict) else None
    return {str(key).lower() for key in properties} if isinstance(properties, dict) else set()
