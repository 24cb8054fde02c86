"""Benchmarks (not tests): ``make bench`` runs :mod:`bench.run_all`; see docs/benchmarks.md."""
