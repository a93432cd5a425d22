"""Counting the `os.fsync` calls a test makes (each still syncs)."""

from __future__ import annotations

import os

import pytest


def count_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the descriptor of every later `os.fsync` call in the list returned."""
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return calls
