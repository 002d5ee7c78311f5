"""Ranking candidates by pairwise preference and Bradley-Terry strengths. Prompts:
evalq.metrics.ratings.rubrics (the comparison frame, as pairwise) and metric (the candidates'
generation requests). Parser: evalq.metrics.ratings.parsing (parse_choice). Scorer: metric,
on evalq.metrics.pairwise's comparisons and evalq.stats.bradley_terry."""
