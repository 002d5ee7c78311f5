"""What the client shows and writes, one folder a format: `terminal/` (what a command prints),
`html/` (the report pages), `exports/` (JSONL, CSV, DataFrames). The words every format says
alike (numbers and money, human agreement, a comparison's counts, a calibration's sentences,
what the judge was shown) sit beside them; the formats import none of each other."""
