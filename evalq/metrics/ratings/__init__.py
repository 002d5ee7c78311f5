"""What the rating metrics (pointwise, pairwise, ranking) share. Prompts: prompts (the frames)
around rubrics (built-in rubrics) or templates (a rubric or a user's file), reading columns
(the dataset columns a template reads) and documents. Parser: parsing (ratings and choices).
Asking the judges: judging (judges, samples, one call to one verdict, a rated row). The
plugins' shared parse_row and check: metric. The judge setup a job reports: setup."""
