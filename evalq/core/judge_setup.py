"""A job's judge setup (JobSummary.judge_setup): what its scores depend on besides the data (an
alias answering as another version, a reworded template, thinking), so a comparison can say
where two jobs differ by more than what they were asked to compare (evalq.comparisons.setups)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evalq.core.metric import get_metric, metric_setup
from evalq.core.models import JobConfig, RowResult
from evalq.core.versions import merge_versions


def judge_setup(config: JobConfig, rows: Iterable[RowResult]) -> dict[str, Any]:
    """The setup of a job from its config and its rows' results: judge models in the order given,
    the versions the API reported per model, thinking per role the metric's judges play, and
    what the metric says of itself (evalq.core.metric.metric_setup)."""
    return {
        "judge_models": config.judges,
        "model_versions": merge_versions(r.model_versions for r in rows),
        "thinking": judge_thinking(config),
        **metric_setup(config),
    }


def judge_thinking(config: JobConfig) -> dict[str, int | str]:
    """Thinking per role the metric's judges play (evalq.core.metric.Metric.judge_roles)."""
    roles = set(get_metric(config.metric).judge_roles)
    return {role: setting for role, setting in sorted(config.thinking.items()) if role in roles}
