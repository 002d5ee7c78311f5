"""Gecko on videos: prompts, reply parsing, plan and aggregate in one module (metric)."""
