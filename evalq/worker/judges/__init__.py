"""One judge call's layers (judges.stack lists their order): the Gemini judge, reply reading, cost, budget, limiter, caches, uploads."""
