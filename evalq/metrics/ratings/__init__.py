"""What the rating metrics (pointwise, pairwise, rank) share: the rubric templates (rubrics)
and the parser of their replies (parsing)."""
