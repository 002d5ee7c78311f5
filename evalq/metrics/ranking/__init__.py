"""Ranking candidates by pairwise preference and Bradley-Terry strengths. Prompts:
evalq.metrics.ratings.prompts (the comparison frame, as pairwise) and prompts (the candidates'
generation requests). Parser: evalq.metrics.ratings.parsing (parse_choice). Scorer: metric,
on evalq.metrics.pairwise.comparisons and evalq.stats.bradley_terry; candidates reads its
options, plan holds its units."""
