"""One package per metric: its prompts, its reply parsing, its plan and aggregate. Parts two
metrics share live once, in `ratings` (pointwise, pairwise, rank) or in `evalq.core`."""
