"""The domain's core: rows and results (models), the error tree, the judge and metric protocols,
dataset and media loading, pricing and the dry run. Pure: no Celery, Redis or runtime here."""
