"""Run the command line as ``python -m harness``."""

from harness.cli import main

raise SystemExit(main())
