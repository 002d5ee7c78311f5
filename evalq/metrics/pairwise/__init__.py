"""Pairwise preference (A / SAME / B, both orders). Prompts: evalq.metrics.ratings.prompts (the
comparison frame). Parser: evalq.metrics.ratings.parsing (parse_choice). Scorer: comparisons
(both orders combined, shared with ranking) and metric (plan, aggregate, win rates); sides
says which columns are A and B."""
