"""Pairwise preference (A / SAME / B, both orders). Prompts: evalq.metrics.ratings.rubrics (the
comparison frame). Parser: evalq.metrics.ratings.parsing (parse_choice). Scorer: metric (plan,
both orders combined, aggregate, win rates)."""
