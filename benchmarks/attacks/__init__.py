"""Attacks: each hostile input class, run as seeded cases, and what went wrong.

`attack_table` runs every class (``python -m benchmarks.attacks.attack_table``) and writes the
table; `fuzz_safety` fuzzes tool arguments and templates.
"""
