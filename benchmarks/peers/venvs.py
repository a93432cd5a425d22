"""Peer virtual environments: one per peer package set, created on demand, never our dependency.

Each `PeerEnv` names pinned requirements and the oldest Python it runs on. `ensure_venv` finds an
interpreter that is new enough, creates the venv under the venv root (a user cache folder,
``~/.cache/context-harness/peers-venvs``, so every checkout on a machine shares it;
``$HARNESS_PEERS_VENVS`` overrides it), installs the pins with pip from the package index, and
writes a marker holding the pins, so an existing venv is reused only when its pins match. Nothing
is ever faked: when a venv cannot be had, the caller gets the reason.

Invariants: a venv is marked ready only after its install succeeded; the marker names its pins.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MARKER = "peers-ready.json"
"""File written into a venv once its pins are installed."""

INSTALL_TIMEOUT_S = 2400
"""Seconds one pip step may take. OpenHands' pins pull ~230 packages and pip's resolver
backtracks over the OpenTelemetry instrumentations: 900 s was not enough on a loaded machine."""


@dataclass(frozen=True)
class PeerEnv:
    """A virtual environment a peer runs in."""

    name: str
    requirements: tuple[str, ...]
    """Pinned requirement specifiers, installed with pip."""
    min_python: tuple[int, int] = (3, 11)


@dataclass(frozen=True)
class VenvStatus:
    """The interpreter of a ready venv, or the reason there is none."""

    python: Path | None
    reason: str | None = None


def default_root() -> Path:
    """Return where peer venvs live: ``$HARNESS_PEERS_VENVS``, else a user cache folder."""
    env = os.environ.get("HARNESS_PEERS_VENVS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "context-harness" / "peers-venvs"


def python_version(executable: str) -> tuple[int, int] | None:
    """Return the ``(major, minor)`` version of an interpreter, or None if it does not run."""
    try:
        out = subprocess.run(
            [executable, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return (int(out[0]), int(out[1])) if len(out) == 2 else None


def find_python(minimum: tuple[int, int]) -> str | None:
    """Find an interpreter at least `minimum`.

    Looks at this interpreter, ``$HARNESS_PEERS_PYTHON``, ``python3.N`` on PATH, then pyenv's
    installed versions (``$PYENV_ROOT`` or ``~/.pyenv``), oldest suitable first.
    """
    minors = range(minimum[1], 16)
    candidates = [sys.executable, os.environ.get("HARNESS_PEERS_PYTHON", "")]
    candidates += [f"python3.{minor}" for minor in minors]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    for minor in minors:
        candidates += [str(p) for p in sorted(pyenv.glob(f"3.{minor}.*/bin/python3.{minor}"))]
    for name in candidates:
        path = shutil.which(name) if name else None
        if path and (version := python_version(path)) is not None and version >= minimum:
            return path
    return None


def venv_python(venv: Path) -> Path:
    """Return the interpreter inside a venv."""
    return venv / "bin" / "python"


def is_ready(env: PeerEnv, root: Path) -> bool:
    """Tell whether the venv exists with exactly `env`'s pins installed."""
    marker = root / env.name / MARKER
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(recorded.get("requirements") == list(env.requirements))


def ensure_venv(env: PeerEnv, root: Path | None = None, *, install: bool = True) -> VenvStatus:
    """Return the venv's interpreter, creating the venv and installing its pins if allowed."""
    root = root or default_root()
    venv = root / env.name
    if is_ready(env, root):
        return VenvStatus(venv_python(venv))
    wanted = f"Python >= {env.min_python[0]}.{env.min_python[1]}"
    if not install:
        return VenvStatus(None, f"venv {venv} is absent and creating it was not allowed")
    python = find_python(env.min_python)
    if python is None:
        return VenvStatus(
            None,
            f"no {wanted} on this machine (looked at {sys.executable}, $HARNESS_PEERS_PYTHON, "
            f"python3.{env.min_python[1]}..python3.15 on PATH and pyenv's versions); set "
            "HARNESS_PEERS_PYTHON to one to run this peer",
        )
    return _create(env, venv, python)


def _create(env: PeerEnv, venv: Path, python: str) -> VenvStatus:
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    steps = [
        [python, "-m", "venv", str(venv)],
        [str(venv_python(venv)), "-m", "pip", "install", "-q", *env.requirements],
    ]
    for cmd in steps:
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            return VenvStatus(None, f"`{' '.join(cmd[:4])} ...` timed out")
        if done.returncode != 0:
            errors = [ln for ln in done.stderr.splitlines() if "WARNING" not in ln][-5:]
            return VenvStatus(None, f"`{' '.join(cmd[:4])} ...` failed: {' | '.join(errors)}")
    marker = {"requirements": list(env.requirements), "python": python}
    (venv / MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
    return VenvStatus(venv_python(venv))
