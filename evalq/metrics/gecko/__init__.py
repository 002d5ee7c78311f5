"""Gecko on images. Prompts: prompts (rubric, re-ask, validators) and choices (hand-written
multiple-choice questions). Parser: parsing (rubric replies, yes/no answers) and choices
(letters). Scorer: metric (plan, run_unit, aggregate, summary) with judges (several validator
judges on one rubric)."""
