"""A job's judge setup (JobSummary.judge_setup): what its scores depend on besides the data.

The same alias answers as another version a month later, a template is reworded, thinking or
the validator mode is changed: two jobs then differ by more than what they were asked to
compare. The setup names each of these, so a comparison can say so (evalq.comparisons.setups):

- judge_models: the judge models, in the order given;
- model_versions: per judge model, the versions the API reported in the rows' verdicts;
- thinking: per judge role, as configured (the model under test's is not the judge's);
- and whatever the metric says of itself (evalq.core.metric.metric_setup): its prompt
  template versions, validator mode, rubric model, samples...
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evalq.core.metric import metric_setup
from evalq.core.models import JobConfig, RowResult
from evalq.core.versions import merge_versions


def judge_setup(config: JobConfig, rows: Iterable[RowResult]) -> dict[str, Any]:
    """The setup of a job from its config and its rows' results (their model versions)."""
    return {
        "judge_models": config.judges,
        "model_versions": merge_versions(r.model_versions for r in rows),
        "thinking": judge_thinking(config.thinking),
        **metric_setup(config),
    }


def judge_thinking(thinking: Mapping[str, int | str]) -> dict[str, int | str]:
    """Thinking per judge role: the candidate role is the model under test, which a comparison
    of two candidates is free to set apart."""
    return {role: setting for role, setting in sorted(thinking.items()) if role != "candidate"}
