"""Results written for other tools: JSON Lines, CSV (spreadsheet-safe), pandas DataFrames; each
metric's own columns (result_columns)."""
