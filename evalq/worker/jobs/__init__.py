"""A job's control: steering and reading jobs (control, reads: the client side's only ways in),
the watchdog, failover, archiving ended jobs, resume outcomes, Prometheus metrics."""
