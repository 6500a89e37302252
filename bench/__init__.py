"""Cyclone's benchmark suite: ``make bench`` (full) / ``make bench-quick``.

Every section runs against the embedded PostgreSQL in a fresh database of its
own (``cyclone_bench_<pid>_<section>``, copied from a sqitch-deployed template
and dropped at the end), and every ratio is taken against a baseline measured
in the same run, on the same database, with the same payloads and concurrency.
See docs/performance.md.
"""
