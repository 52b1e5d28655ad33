"""Benchmarks, run by hand (``make bench``) and as a smoke run in CI (``make bench-smoke``).

Each benchmark times its subject and a baseline in the same run and reports the ratio, because
absolute times on a shared two-core machine are noise.
"""
