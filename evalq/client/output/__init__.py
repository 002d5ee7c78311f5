"""What the client shows and writes, one folder a format: `terminal/`, `html/`, `exports/`. The
words every format says alike sit beside them; the formats import none of each other."""
