"""How rows reach the workers: queue names, a job's turns, each worker's pace, running rows' signs of life."""
