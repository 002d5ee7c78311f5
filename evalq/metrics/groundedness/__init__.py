"""Groundedness. Prompts: prompts (the judge's labelling prompt, its re-ask, the request for a
response to judge). Parser: parsing (labelling replies), with sentences (our split of the
response), labels and label_alignment (labels matched to those sentences). Asking: judging (one
judge's labelling and its re-ask). Scorer: scoring (one judge's verdict) with excerpts (is a
quoted excerpt in the context?), and summary (the job's figures). The plugin: metric, on
plan; the judge setup a job reports: setup."""
