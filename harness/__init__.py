"""The `harness` command line: a thin layer over `compaction` and `prompts`."""

from harness.cli import build_parser, main

__all__ = ["build_parser", "main"]
