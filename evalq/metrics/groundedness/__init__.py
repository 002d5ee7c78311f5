"""Groundedness. Prompts: prompts (the judge's labelling prompt, its re-ask, the request for a
response to judge). Parser: parsing (labelling replies), with sentences (our split of the
response), labels and label_alignment (labels matched to those sentences). Scorer: excerpts
(is a quoted excerpt in the context?) and metric (plan, run_unit, aggregate, summary)."""
