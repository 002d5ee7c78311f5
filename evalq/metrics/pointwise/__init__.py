"""Pointwise rating (1-5). Prompts: evalq.metrics.ratings.rubrics (built-in rubrics, user
templates, the rating frame). Parser: evalq.metrics.ratings.parsing (parse_rating). Scorer:
metric (plan, run_unit, aggregate, summary)."""
