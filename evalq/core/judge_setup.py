"""A job's judge setup (JobSummary.judge_setup): what its scores depend on besides the data.

The same alias answers as another version a month later, a template is reworded, thinking or
the validator mode is changed: two jobs then differ by more than what they were asked to
compare. The setup names each of these, so a comparison can say so (evalq.comparisons.setups):

- judge_models: the judge models, in the order given;
- model_versions: per judge model, the versions the API reported in the rows' verdicts;
- thinking: per role the metric's judges play, as configured (the model under test's is not
  the judge's, and a role the metric never calls changes none of its scores);
- and whatever the metric says of itself (evalq.core.metric.metric_setup): its prompt
  template versions, validator mode, rubric model, samples...
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evalq.core.metric import get_metric, metric_setup
from evalq.core.models import JobConfig, RowResult
from evalq.core.versions import merge_versions


def judge_setup(config: JobConfig, rows: Iterable[RowResult]) -> dict[str, Any]:
    """The setup of a job from its config and its rows' results (their model versions)."""
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
