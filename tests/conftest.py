"""Shared test setup: hypothesis profiles and fixtures.

Profiles: ``dev`` (default, thorough), ``ci`` (selected when ``CI`` is set, or with
``HYPOTHESIS_PROFILE=ci``: fewer examples, no deadline) and ``mutate`` (``scripts/mutate``: few
examples, derandomized, so a mutant is killed or not the same way on every run).

Every run but a derandomized one draws a fresh seed, so CI explores new examples each time; the
seed is printed in the header and the summary, and ``--hypothesis-seed=N`` (or
``HYPOTHESIS_SEED=N``) replays a run exactly.

Bytecode caches: where ``PYTHONDONTWRITEBYTECODE`` is set (as on these machines), every one of
the suite's processes (two xdist workers, each CLI subprocess) would compile every module it
imports, LangChain's and the SDKs' included, and pytest would rewrite every test module's asserts
again: about 8 s of CPU per process. The suite keeps its caches out of the source tree instead,
under ``<sys.prefix>/pycache`` (the venv), and hands that to the processes it starts. A
``PYTHONPYCACHEPREFIX`` already set is kept.
"""

from __future__ import annotations

import gc
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cost_order
import pytest

# Before Hypothesis is imported: pytest rewrites the asserts of an installed plugin's package
# (Hypothesis's), and caches the result only where bytecode may be written; imported before
# this, Hypothesis's 80 modules were rewritten anew by every pytest process (1 CPU s each).
if sys.dont_write_bytecode and not sys.pycache_prefix:
    sys.dont_write_bytecode = False
    sys.pycache_prefix = str(Path(sys.prefix) / "pycache")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix

from hypothesis import HealthCheck, settings

settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    # 25 examples per property (40 until the suite's CPU time was cut, issue 28): each CI run
    # draws a fresh seed, so the runs together explore far more; `dev` keeps 100.
    max_examples=25,
    deadline=None,
    # Hypothesis's own built-in "ci" profile derandomizes, and a profile registered under that
    # name inherits it unless told otherwise: say so, so every CI run draws a fresh seed.
    derandomize=False,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "mutate",
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def current_profile() -> settings:
    """The loaded Hypothesis profile."""
    return settings.get_profile(settings.get_current_profile_name())


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Pick this run's Hypothesis seed (unless given or derandomized) before Hypothesis reads it.

    Under pytest-xdist the controller picks it and every worker takes the controller's (see
    `pytest_configure_node`), so the one seed printed replays every worker's examples.
    """
    if current_profile().derandomize:
        return
    worker: dict[str, object] | None = getattr(config, "workerinput", None)
    if worker is not None and worker.get("hypothesis_seed") is not None:
        config.option.hypothesis_seed = worker["hypothesis_seed"]
    elif config.getoption("hypothesis_seed", None) is None:
        seed = os.environ.get("HYPOTHESIS_SEED") or str(random.randrange(2**32))
        config.option.hypothesis_seed = seed


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:  # xdist WorkerController
    """Hand the controller's Hypothesis seed to an xdist worker."""
    node.workerinput["hypothesis_seed"] = node.config.getoption("hypothesis_seed", None)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection made, so the cyclic collector stops walking it at each full pass.

    Collection leaves half a million objects that live as long as the process (every module,
    the SDKs' classes, every test item); a full collection walked them all, 0.35 CPU s each time,
    and the examples' tests call `gc.collect()` 21 times. Frozen, they are never collected (they
    would not be anyway); what the tests allocate is collected as before.
    """
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the costliest test files first (`cost_order`), so xdist starts the long tests early.

    Left last, one long test keeps one worker busy while the other idles.
    """
    cost_order.order_by_cost(items, cost_order.load_table())


def seed_line(config: pytest.Config) -> str:
    """Say how to replay this run's examples."""
    if current_profile().derandomize:
        return f"hypothesis: derandomized profile {settings.get_current_profile_name()!r}"
    seed = config.getoption("hypothesis_seed", None)
    return f"hypothesis seed {seed}: replay with --hypothesis-seed={seed} (or HYPOTHESIS_SEED)"


def pytest_report_header(config: pytest.Config) -> str:
    """Print the seed at the top of the run."""
    return seed_line(config)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the seed again at the end, where a failure is read."""
    terminalreporter.write_line(seed_line(terminalreporter.config))


TRANSCRIPTS = Path(
    os.environ.get("HARNESS_TRANSCRIPTS")
    or Path(__file__).resolve().parents[1].parent / "shared" / "transcripts"
)
"""The shared real transcripts: ../shared/transcripts, or $HARNESS_TRANSCRIPTS (a worktree's)."""


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    """Return a path for a fresh session log."""
    return tmp_path / "session.jsonl"


@pytest.fixture
def transcripts() -> Path:
    """Return ../shared/transcripts, or skip when the folder is absent."""
    if not TRANSCRIPTS.is_dir():
        pytest.skip(f"real transcripts not found at {TRANSCRIPTS}")
    return TRANSCRIPTS


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """Return the URL of a PostgreSQL server: $HARNESS_TEST_POSTGRES_URL, or a throwaway one.

    The throwaway server is started from the operating system's binaries on a free local port
    in a temporary folder, and stopped after the run. Where none can be started the tests that
    need it skip, saying why; with HARNESS_REQUIRE_POSTGRES=1 (set by .ci/run) they fail instead.
    """
    given = os.environ.get("HARNESS_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    from harness.testing import ServerUnavailable, start_postgres

    try:
        server = start_postgres(durable=False)
    except ServerUnavailable as exc:
        if os.environ.get("HARNESS_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required here but cannot start: {exc}")
        pytest.skip(f"no PostgreSQL server can be started here: {exc}")
    try:
        yield server.url
    finally:
        server.stop()
