"""Ranking by pairwise preferences and Bradley-Terry strengths: plan and aggregate (metric)."""
