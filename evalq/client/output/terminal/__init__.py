"""What a command prints: text made safe for a terminal, the console that guards it, the job
summary drawn without rich, and the rich tables (dry run, batches, jobs, comparisons,
calibrations)."""
