"""Benchmarks, each run as ``python -m bench.NAME`` and measured against a baseline in the same
run, so that the numbers compare like with like on whatever machine runs them."""
