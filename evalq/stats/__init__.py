"""Statistics over verdicts: confidence intervals, judge agreement, Bradley-Terry strengths."""
