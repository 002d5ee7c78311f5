"""What the rating metrics (pointwise, pairwise, ranking) share. Prompts: rubrics (built-in
rubrics, user templates and the frames around them). Parser: parsing (ratings and choices).
Asking the judges: judging (judges, samples, one call to one verdict)."""
