"""Groundedness: sentence splitting (sentences), the labelling prompt and reply parsing (parsing,
labels), alignment of labels to sentences (label_alignment), plan and aggregate (metric)."""
