"""Shared test setup: hypothesis profiles and fixtures.

Profiles: ``dev`` (default, thorough) and ``ci`` (selected when ``CI`` is set, or with
``HYPOTHESIS_PROFILE=ci``): fewer examples, no deadline, derandomized so CI runs are repeatable.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

TRANSCRIPTS = Path(__file__).resolve().parents[1].parent / "shared" / "transcripts"


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
    from benchmarks import pgserver

    try:
        server = pgserver.start(durable=False)
    except pgserver.ServerUnavailable as exc:
        if os.environ.get("HARNESS_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required here but cannot start: {exc}")
        pytest.skip(f"no PostgreSQL server can be started here: {exc}")
    try:
        yield server.url
    finally:
        server.stop()
