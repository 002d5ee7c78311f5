"""The evalq runtime: Celery app, settings, judge clients, Redis store, fake Gemini server."""
