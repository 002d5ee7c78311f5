"""Rubric: per-prompt pass/fail tests for text, written by a rubric model and checked one by one
against the response by a judge; built on Gecko's rubric and validator machinery."""
