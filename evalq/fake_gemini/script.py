"""Script rules: canned answers for requests whose text matches a regex, so a test or a demo
forces exact behaviour for chosen prompts; rules are validated strictly when loaded, so a typo
fails at startup instead of silently never firing."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

QuotaKind = Literal["minute", "day"]

# HTTP codes a rule may answer with, and the google.rpc status name Gemini sends for each.
ERROR_STATUSES: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

# Finish reasons that still deliver text; every other one comes back without content parts.
TEXT_FINISH_REASONS = frozenset({"STOP", "MAX_TOKENS"})
# Every finish reason google-genai 3.4.0 knows (types.FinishReason), the Vertex-only ones too:
# a client must read them all, so a rule may send any of them.
FINISH_REASONS = TEXT_FINISH_REASONS | {
    "FINISH_REASON_UNSPECIFIED",
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_OTHER",
    "NO_IMAGE",
    "IMAGE_RECITATION",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
    "MISSING_THOUGHT_SIGNATURE",
    "MALFORMED_RESPONSE",
    "ESCALATION",
    "PUP_LIMITED_DISABLED",
    "CONTINUATION",
    "MODEL_ARMOR",
}
# Every block reason google-genai 3.4.0 knows (types.BlockedReason).
BLOCK_REASONS = frozenset(
    {
        "BLOCKED_REASON_UNSPECIFIED",
        "SAFETY",
        "OTHER",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "IMAGE_SAFETY",
        "MODEL_ARMOR",
        "JAILBREAK",
    }
)

_FIELDS = frozenset(
    {
        "match",
        "reply",
        "status",
        "retry_delay_s",
        "quota",
        "finish_reason",
        "block_reason",
        "delay_ms",
        "times",
        "body",
        "batch_state",
        "cached_tokens",
        "model_version",
    }
)
_ACTIONS = (
    "reply",
    "status",
    "finish_reason",
    "block_reason",
    "delay_ms",
    "batch_state",
    "cached_tokens",
)
# How a batch holding a matching request may end instead of succeeding (the Batch API's
# terminal states other than SUCCEEDED and CANCELLED, which only the caller causes).
BATCH_END_STATES = frozenset({"EXPIRED", "FAILED"})


class ScriptError(ValueError):
    """A script rule is invalid; the message names the line (file) or index (POST /script)."""


@dataclass(frozen=True)
class ScriptRule:
    """One rule; ``index`` is its position among the rules, the key used in /stats."""

    index: int
    pattern: re.Pattern[str]
    reply: str | None = None
    status: int | None = None
    retry_delay_s: float = 1.0
    quota: QuotaKind = "minute"
    finish_reason: str | None = None
    block_reason: str | None = None
    delay_ms: float = 0.0
    times: int | None = None
    # A recorded reply sent as is with `status`: a 200 body (any shape the real API answered
    # with), or an error body, an object or a list for Vertex's list-wrapped form. It replays
    # real API bodies through the real client.
    body: dict[str, object] | list[object] | None = None
    # Ends the whole batch that holds a matching request in this state (no request answered);
    # such a rule never fires for a single generateContent call.
    batch_state: str | None = None
    # Prompt tokens the reply reports as served from a cache (cachedContentTokenCount), as
    # implicit caching reports them; capped at the prompt's own count, which includes them.
    cached_tokens: int = 0
    # The modelVersion a text reply carries; None: the scripted version for a `reply`, the
    # server's simulated one (with its suffix, if set) for the brain's text.
    model_version: str | None = None


def _number(rule: Mapping[str, object], name: str, default: float) -> float:
    value = rule.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"{name!r} must be a non-negative number, got {value!r}")
    return float(value)


def _optional_str(rule: Mapping[str, object], name: str) -> str | None:
    value = rule.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name!r} must be a string, got {value!r}")
    return value


def _choice(rule: Mapping[str, object], name: str, allowed: Collection[str]) -> str | None:
    value = _optional_str(rule, name)
    if value is not None and value not in allowed:
        raise ValueError(f"{name!r} must be one of {sorted(allowed)}, got {value!r}")
    return value


def _pattern(rule: Mapping[str, object]) -> re.Pattern[str]:
    source = rule.get("match")
    if not isinstance(source, str):
        raise ValueError("'match' (a regex string) is required")
    try:
        return re.compile(source, re.DOTALL)
    except re.error as exc:
        raise ValueError(f"'match' is not a valid regex: {exc}") from exc


def _status(rule: Mapping[str, object]) -> int | None:
    value = rule.get("status")
    if value is None:
        return None
    if "body" in rule:  # a replayed body may carry 200 or any error status the API sends
        ok = value == 200 or (isinstance(value, int) and 400 <= value <= 599)
        if isinstance(value, bool) or not isinstance(value, int) or not ok:
            raise ValueError(
                f"'status' with a 'body' must be 200 or an HTTP error code, got {value!r}"
            )
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value not in ERROR_STATUSES:
        raise ValueError(f"'status' must be one of {sorted(ERROR_STATUSES)}, got {value!r}")
    return value


def _body(rule: Mapping[str, object]) -> dict[str, object] | list[object] | None:
    if "body" not in rule:
        return None
    value = rule["body"]
    if not isinstance(value, dict | list):
        raise ValueError(f"'body' must be a JSON object or list, got {type(value).__name__}")
    if "status" not in rule:
        raise ValueError("'body' needs the 'status' to send it with")
    return value


def _cached_tokens(rule: Mapping[str, object]) -> int:
    value = rule.get("cached_tokens", 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"'cached_tokens' must be a non-negative integer, got {value!r}")
    return value


def _times(rule: Mapping[str, object]) -> int | None:
    value = rule.get("times")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"'times' must be a positive integer, got {value!r}")
    return value


def _check_consistent(rule: Mapping[str, object], built: ScriptRule) -> None:
    """Reject combinations where one field would silently override another."""
    if not any(name in rule for name in _ACTIONS):
        raise ValueError(f"rule does nothing: give at least one of {', '.join(_ACTIONS)}")
    answers = [name for name in ("reply", "status", "block_reason") if name in rule]
    if len(answers) > 1:
        raise ValueError(f"{' and '.join(answers)} cannot be combined")
    if built.status is not None and "finish_reason" in rule:
        raise ValueError("'status' and 'finish_reason' cannot be combined")
    if built.block_reason is not None and "finish_reason" in rule:
        raise ValueError("'block_reason' and 'finish_reason' cannot be combined")
    if built.reply is not None and built.finish_reason not in (None, *TEXT_FINISH_REASONS):
        raise ValueError(f"finish_reason {built.finish_reason} sends no text, drop 'reply'")
    if built.status != 429 and ("retry_delay_s" in rule or "quota" in rule):
        raise ValueError("'retry_delay_s' and 'quota' only apply to status 429")
    if built.body is not None and ("retry_delay_s" in rule or "quota" in rule):
        raise ValueError("a replayed 'body' already says its delay and quota")
    if built.batch_state is not None and len([n for n in _ACTIONS if n in rule]) > 1:
        raise ValueError("'batch_state' ends a whole batch; it takes no other action")
    if "cached_tokens" in rule and (built.status is not None or built.block_reason is not None):
        raise ValueError("'cached_tokens' goes with a reply, not an error or a blocked prompt")
    if built.model_version is not None and not _sends_text(built):
        raise ValueError("'model_version' goes with a reply that has text")


def _sends_text(rule: ScriptRule) -> bool:
    """The rule answers with a text reply (its own or the brain's), not an error or a block."""
    if rule.status is not None or rule.block_reason is not None or rule.batch_state is not None:
        return False
    return rule.finish_reason in (None, *TEXT_FINISH_REASONS)


def parse_rule(rule: object, index: int) -> ScriptRule:
    """Build one rule; raises ValueError with a message that does not yet say where it is."""
    if not isinstance(rule, dict):
        raise ValueError(f"a rule must be a JSON object, got {type(rule).__name__}")
    unknown = sorted(set(rule) - _FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {unknown}; known: {sorted(_FIELDS)}")
    quota = _choice(rule, "quota", ("minute", "day"))
    built = ScriptRule(
        index=index,
        pattern=_pattern(rule),
        reply=_optional_str(rule, "reply"),
        status=_status(rule),
        retry_delay_s=_number(rule, "retry_delay_s", 1.0),
        quota="day" if quota == "day" else "minute",
        finish_reason=_choice(rule, "finish_reason", FINISH_REASONS),
        block_reason=_choice(rule, "block_reason", BLOCK_REASONS),
        delay_ms=_number(rule, "delay_ms", 0.0),
        times=_times(rule),
        body=_body(rule),
        batch_state=_choice(rule, "batch_state", BATCH_END_STATES),
        cached_tokens=_cached_tokens(rule),
        model_version=_optional_str(rule, "model_version"),
    )
    _check_consistent(rule, built)
    return built


def parse_rules(rules: object) -> list[ScriptRule]:
    """Validate rules POSTed to /script; errors name the rule's index in the list."""
    if not isinstance(rules, list):
        raise ScriptError("the script must be a JSON list of rules")
    parsed = []
    for index, rule in enumerate(rules):
        try:
            parsed.append(parse_rule(rule, index))
        except ValueError as exc:
            raise ScriptError(f"rule {index}: {exc}") from exc
    return parsed


def load_script(path: str | Path) -> list[ScriptRule]:
    """Read a JSONL script; blank lines and lines starting with '#' are skipped."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ScriptError(f"{path}: cannot read script: {exc}") from exc
    rules: list[ScriptRule] = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            rules.append(parse_rule(json.loads(stripped), len(rules)))
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{path}:{number}: invalid JSON: {exc.msg}") from exc
        except ValueError as exc:
            raise ScriptError(f"{path}:{number}: {exc}") from exc
    return rules


class Script:
    """The active rules and how often each fired, which is what enforces ``times``."""

    def __init__(self, rules: list[ScriptRule] | None = None) -> None:
        self._rules: list[ScriptRule] = []
        self.fired: dict[int, int] = {}
        self.replace(rules or [])

    @property
    def rules(self) -> list[ScriptRule]:
        return list(self._rules)

    def replace(self, rules: list[ScriptRule]) -> None:
        self._rules = list(rules)
        self.reset()

    def reset(self) -> None:
        """Re-arm every rule, so ``times`` limits count again from zero."""
        self.fired = {rule.index: 0 for rule in self._rules}

    def take(self, text: str) -> ScriptRule | None:
        """Return the first live rule matching ``text`` and count it as fired."""
        return self._take(text, batch_end=False)

    def take_batch_end(self, texts: Iterable[str]) -> ScriptRule | None:
        """The first live ``batch_state`` rule matching any of a batch's request texts."""
        for text in texts:
            if (rule := self._take(text, batch_end=True)) is not None:
                return rule
        return None

    def _take(self, text: str, *, batch_end: bool) -> ScriptRule | None:
        for rule in self._rules:
            if (rule.batch_state is not None) != batch_end:
                continue
            used = self.fired.get(rule.index, 0)
            if rule.times is not None and used >= rule.times:
                continue
            if rule.pattern.search(text):
                self.fired[rule.index] = used + 1
                return rule
        return None
