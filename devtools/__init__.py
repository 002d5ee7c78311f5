"""Tools for developing evalq, never part of the service: the local process launcher the demo,
the benchmarks and the tests share (local), and the benchmarks (bench/). The service packages
(evalq, worker, tasks) never import this package."""
