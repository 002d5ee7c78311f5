"""Pointwise rating (1-5). Prompts: evalq.metrics.ratings.prompts (the rating frame) around
evalq.metrics.ratings.rubrics or .templates (built-in rubrics, user templates). Parser:
evalq.metrics.ratings.parsing (parse_rating). Scorer: metric (plan, run_unit, aggregate,
summary)."""
