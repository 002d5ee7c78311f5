"""Gecko on images. Prompts: prompts (rubric, re-ask, validators) and choices (hand-written
multiple-choice questions). Parser: parsing (rubric replies, yes/no answers) and choices
(letters). Rubric: rubric (writing, the gap re-ask, the cache id); validators: validation.
Scorer: scoring (score_row) with judges (several validator judges on one rubric). The plugin:
metric, on plan, modes (its options) and dry (a dry run's calls); setup (the judge setup a
job reports)."""
