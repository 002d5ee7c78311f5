"""The fake server's routes, one module per API: generateContent and countTokens (generate),
the Batch API (batches), the Files API (files), the knobs real Gemini does not have (control),
Vertex AI's online routes (vertex), and the catch-all that dispatches the paths among them
(api)."""
