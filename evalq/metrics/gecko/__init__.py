"""Gecko on images: rubric questions from the prompt (prompts, parsing), the judges that
answer them (judges, choices), and the plan and aggregate (metric)."""
