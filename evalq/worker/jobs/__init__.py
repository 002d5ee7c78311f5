"""A job's control: steering and reading jobs, the watchdog, failover, archiving ended jobs, metrics."""
