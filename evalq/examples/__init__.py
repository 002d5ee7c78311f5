"""The bundled example datasets, one module per family of metrics."""
