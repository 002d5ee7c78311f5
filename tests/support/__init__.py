"""Helpers the tests share, defined once: writing datasets (datasets.py). The processes the
integration tests start (Redis, workers, the fake server) come from worker.local, the harness
the demo and the benchmark use too."""
