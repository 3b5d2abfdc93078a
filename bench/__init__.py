"""Benchmarks, each run as ``python -m bench NAME`` (or ``python -m bench.NAME``) and measured
against a baseline in the same run, so that the numbers compare like with like on whatever
machine runs them. ``python -m bench all`` runs every one at a small size; BENCHMARKS.md has
the figures and how to read them."""
