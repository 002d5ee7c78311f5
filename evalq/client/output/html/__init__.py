"""The HTML pages: a job's report, a comparison, a calibration; each one self-contained file,
autoescaped (page)."""
