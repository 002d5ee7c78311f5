"""The fake server's routes, one module per API: generate, batches, files, control (the knobs
real Gemini does not have), vertex and vertex_batches, and api, the catch-all that dispatches
the paths among them."""
