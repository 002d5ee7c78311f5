"""The layers of one judge call, in the order judges.stack.LAYERS gives: accounting, fatal
errors, thinking, the call cache, the budget, the limiter's correction; then the Gemini judge,
its replies read, its uploads and media."""
