"""Thinking, per role, on purpose: Gemini 2.5 models think by default and bill their thoughts as
output tokens within ``max_output_tokens``, so every judge role says how much it may think,
checked against what each model family allows (sources: docs/architecture/gemini-facts.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal, get_args

from evalq.core.judge import Judge, JudgeReply, JudgeRequest, Thinking

Role = Literal["rubric", "validator", "judge", "candidate"]
ROLES: tuple[Role, ...] = get_args(Role)
ROLE_ALIASES: dict[str, Role] = {"rater": "judge", "rubric-writer": "rubric"}
LEVELS = ("minimal", "low", "medium", "high")
# "min": as little as the model allows (0 where thinking can be switched off, else the model's
# minimum or lowest level); "modest": a small budget (MODEST_BUDGET, or level "low");
# "default": send no thinking configuration at all (the model's own default).
PRESETS = ("min", "modest", "default")
Setting = int | str

MODEST_BUDGET = 1024
# Yes/no and rating calls need no deliberation; a rubric writer plans keywords and questions,
# so it gets a little; the model under test is evaluated as it is configured by default.
DEFAULTS: dict[str, Setting] = {
    "rubric": "modest",
    "validator": "min",
    "judge": "min",
    "candidate": "default",
}
# Room for thinking when no number bounds it: the 2.5 models' automatic budget goes up to 8,192
# tokens (Vertex AI thinking page); for levels Google publishes no token figures, so these are
# evalq's own allowances. They only raise a cap: unused output tokens cost nothing.
DYNAMIC_RESERVE = 8192
LEVEL_RESERVE = {"minimal": 2048, "low": 8192, "medium": 16384, "high": 32768}
OUTPUT_LIMIT = 65535  # the 2.5 and 3 models' maximum output tokens


class ThinkingError(ValueError):
    """A thinking setting the model would refuse; the message names role, model and range."""


@dataclass(frozen=True)
class Family:
    """What one model family accepts, by the longest matching name prefix."""

    prefix: str
    kind: Literal["budget", "level", "none"]
    budget_min: int = 0  # smallest positive budget
    budget_max: int = 0
    can_disable: bool = False  # budget 0 accepted
    thinks_by_default: bool = False
    levels: tuple[str, ...] = ()
    verified: bool = True  # False: evalq knows the family takes levels, not which

    def allowed(self) -> str:
        if self.kind == "budget":
            off = "0 (off), " if self.can_disable else ""
            return f"{off}-1 (dynamic) or {self.budget_min}..{self.budget_max}"
        if self.kind == "level":
            return "levels " + ", ".join(self.levels or LEVELS)
        return "no thinking configuration (it does not think)"


FAMILIES: tuple[Family, ...] = (
    Family("gemini-2.5-flash-lite", "budget", 512, 24576, can_disable=True),
    Family("gemini-2.5-flash-image", "none"),
    Family("gemini-2.5-flash", "budget", 1, 24576, can_disable=True, thinks_by_default=True),
    Family("gemini-2.5-pro", "budget", 128, 32768, can_disable=False, thinks_by_default=True),
    Family("gemini-3-pro", "level", levels=("low", "high")),
    Family("gemini-3.1-pro", "level", levels=("low", "medium", "high")),
    Family("gemini-3-flash", "level", levels=LEVELS),
    Family("gemini-3", "level", verified=False),
    Family("gemini-2.0", "none"),
    Family("gemini-1.5", "none"),
)


def model_name(model: str) -> str:
    """The bare model id: "models/x" and Vertex's ".../publishers/google/models/x" become x."""
    return model.rsplit("/", 1)[-1].strip().lower()


def family_of(model: str) -> Family | None:
    name = model_name(model)
    matches = [f for f in FAMILIES if name.startswith(f.prefix)]
    return max(matches, key=lambda f: len(f.prefix)) if matches else None


# ---- reading settings ------------------------------------------------------------------------


def parse_setting(value: object, *, where: str = "thinking") -> Setting:
    """An int budget, a level name or a preset; strings of digits are budgets."""
    if isinstance(value, bool):
        raise ThinkingError(f"{where}: {value!r} is not a budget, level or preset")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        try:
            return int(text)
        except ValueError:
            pass
        if text in LEVELS or text in PRESETS:
            return text
    raise ThinkingError(
        f"{where}: {value!r} is not a budget (an integer, -1 dynamic, 0 off), "
        f"a level ({', '.join(LEVELS)}) or one of {', '.join(PRESETS)}"
    )


def parse_role(name: str) -> Role:
    key = name.strip().lower()
    key = ROLE_ALIASES.get(key, key)
    for role in ROLES:
        if role == key:
            return role
    raise ThinkingError(f"unknown thinking role {name!r}; roles: {', '.join(ROLES)}")


def parse_settings(values: Mapping[str, object]) -> dict[str, Setting]:
    """{role: setting} from JSON (EVALQ_THINKING) or the Python API; role names are checked."""
    return {
        parse_role(role): parse_setting(value, where=f"thinking for {role}")
        for role, value in values.items()
    }


def parse_assignments(
    items: Iterable[str], *, kind: Literal["budget", "level"]
) -> dict[str, Setting]:
    """CLI flags: ``ROLE=VALUE`` pairs; budgets take integers or presets, levels take levels."""
    out: dict[str, Setting] = {}
    for item in items:
        role, sep, raw = item.partition("=")
        if not sep or not raw.strip():
            raise ThinkingError(f"{item!r}: expected ROLE=VALUE, roles: {', '.join(ROLES)}")
        value = parse_setting(raw, where=f"thinking for {role.strip()}")
        if kind == "budget" and value in LEVELS:
            raise ThinkingError(f"{item!r}: {value!r} is a level; use --thinking-level")
        if kind == "level" and value not in LEVELS:
            raise ThinkingError(f"{item!r}: a level is one of {', '.join(LEVELS)}")
        out[parse_role(role)] = value
    return out


def effective(*layers: Mapping[str, Setting] | None) -> dict[str, Setting]:
    """Built-in defaults, then each layer in order (settings, then per-job flags)."""
    merged: dict[str, Setting] = dict(DEFAULTS)
    for layer in layers:
        merged.update(parse_settings(layer or {}))
    return merged


# ---- checking against models ---------------------------------------------------------------


def check(role: str, setting: Setting, model: str) -> list[str]:
    """Raise ThinkingError if ``model`` would refuse the setting (a bad budget is a 400 on every
    call), before a job is enqueued; return warnings otherwise. A model evalq does not know
    gets the setting as given, and "min"/"modest" send nothing, with a warning."""
    family = family_of(model)
    if setting == "default":
        return []
    if family is None:
        if setting in ("min", "modest"):
            return [
                f"thinking: model {model!r} is not in evalq's table; the {role} role's "
                f"{setting!r} thinking is not sent (the model's own default applies)"
            ]
        return [
            f"thinking: model {model!r} is not in evalq's table; the {role} role's "
            f"thinking {setting!r} is sent as given"
        ]
    explicit = setting not in PRESETS
    if family.kind == "none":
        if explicit:
            raise ThinkingError(
                f"thinking for the {role} role: {model} takes {family.allowed()}; got {setting!r}"
            )
        return []
    if family.kind == "budget":
        if isinstance(setting, str) and setting in LEVELS:
            raise ThinkingError(
                f"thinking for the {role} role: {model} takes a thinking budget, not a level "
                f"({family.allowed()}); got level {setting!r}"
            )
        if isinstance(setting, int) and not _budget_ok(family, setting):
            raise ThinkingError(
                f"thinking budget for the {role} role: {model} takes {family.allowed()}; "
                f"got {setting}"
            )
        return []
    # level families
    if isinstance(setting, int):
        return [
            f"thinking: {model} takes a thinking level; the {role} role's budget {setting} is "
            "sent as a budget, which Gemini 3 models accept only for backward compatibility"
        ]
    if setting in LEVELS and family.levels and setting not in family.levels:
        raise ThinkingError(
            f"thinking level for the {role} role: {model} takes {family.allowed()}; got {setting!r}"
        )
    if setting in LEVELS and not family.verified:
        return [f"thinking: evalq does not know which levels {model} takes; {setting!r} is sent"]
    return []


def _budget_ok(family: Family, budget: int) -> bool:
    if budget == -1:
        return True
    if budget == 0:
        return family.can_disable
    return family.budget_min <= budget <= family.budget_max


def check_job(
    thinking: Mapping[str, Setting], models_by_role: Mapping[str, Iterable[str]]
) -> list[str]:
    """Check every role's setting against every model that may play that role."""
    warnings: list[str] = []
    for role, models in models_by_role.items():
        setting = thinking.get(role, "default")
        for model in dict.fromkeys(models):
            for warning in check(role, setting, model):
                if warning not in warnings:
                    warnings.append(warning)
    return warnings


# ---- what a request carries ----------------------------------------------------------------


def resolve(setting: Setting, model: str) -> Thinking | None:
    """The thinking configuration sent for this setting on this model (None: send nothing)."""
    if setting == "default":
        return None
    family = family_of(model)
    if family is None:
        if setting in ("min", "modest"):
            return None
        return Thinking(budget=setting) if isinstance(setting, int) else Thinking(level=setting)
    if family.kind == "none":
        return None
    if family.kind == "budget":
        if setting == "min":
            return Thinking(budget=0 if family.can_disable else family.budget_min)
        if setting == "modest":
            return Thinking(budget=min(max(MODEST_BUDGET, family.budget_min), family.budget_max))
        if isinstance(setting, int):
            return Thinking(budget=setting)
        raise ThinkingError(f"{model} takes a thinking budget, not level {setting!r}")
    levels = family.levels or ("low", "medium", "high")
    if setting == "min":
        return Thinking(level=levels[0])
    if setting == "modest":
        return Thinking(level="low" if "low" in levels else levels[0])
    if isinstance(setting, int):
        return Thinking(budget=setting)
    return Thinking(level=setting)


def output_allowance(answer_tokens: int, thinking: Thinking | None, model: str) -> int:
    """max_output_tokens: the answer's allowance plus room for the thinking before it."""
    family = family_of(model)
    if family is None or family.kind == "none":
        return answer_tokens
    reserve = 0
    if thinking is None:
        if family.kind == "level":
            reserve = LEVEL_RESERVE["high"]
        elif family.thinks_by_default:
            reserve = DYNAMIC_RESERVE
    elif thinking.level is not None:
        reserve = LEVEL_RESERVE.get(thinking.level, LEVEL_RESERVE["high"])
    elif thinking.budget is not None:
        reserve = (
            max(family.budget_max, DYNAMIC_RESERVE) if thinking.budget < 0 else thinking.budget
        )
    return min(answer_tokens + reserve, OUTPUT_LIMIT)


def apply(
    request: JudgeRequest, thinking: Mapping[str, Setting], model: str, answer_tokens: int
) -> JudgeRequest:
    """The one place a role's thinking becomes a request's: its thinking configuration and a
    max_output_tokens with room for the answer after it. A request that already carries a
    thinking configuration keeps it."""
    chosen = request.thinking
    if chosen is None:
        chosen = resolve(thinking.get(request.role, "default"), model)
    answer = request.max_output_tokens or answer_tokens
    return replace(
        request, thinking=chosen, max_output_tokens=output_allowance(answer, chosen, model)
    )


class ThinkingJudge:
    """Gives every request the thinking its role has in this job, before it is cached or sent,
    so the thinking is part of the call-cache key and of what the model receives."""

    def __init__(
        self,
        inner: Judge,
        thinking: Mapping[str, Setting],
        answer_tokens: int,
        *,
        role: Role | None = None,
    ) -> None:
        self.model = inner.model
        self._inner = inner
        self._thinking = dict(thinking)
        self._answer_tokens = answer_tokens
        self._role = role  # set for the model under test: every call it makes is "candidate"

    def generate(self, request: JudgeRequest) -> JudgeReply:
        if self._role is not None:
            request = replace(request, role=self._role)
        return self._inner.generate(apply(request, self._thinking, self.model, self._answer_tokens))
