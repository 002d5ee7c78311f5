"""How rows reach the workers: the queue names, a job's turns, each worker's pace, and the signs
of life of running rows that keep the watchdog off them."""
