"""A fake Gemini REST server for offline runs and tests; its verdicts are labelled simulated."""
