"""evalq: model-as-judge evaluations (Gecko, groundedness, pointwise, pairwise) on Celery + Redis."""

__version__ = "0.1.0"
