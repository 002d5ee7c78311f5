"""The fake server's routes, one module per API: generateContent and countTokens (generate),
the Batch API (batches), the Files API (files), the knobs real Gemini does not have (control),
and the catch-all that dispatches the Gemini paths among them (api)."""
