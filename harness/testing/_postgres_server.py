"""A throwaway PostgreSQL server on a local port, for the store tests and the store benchmark.

Uses the server binaries of the operating system's package (Debian: ``apt-get install
postgresql``, found under ``/usr/lib/postgresql/<version>/bin``) or any ``initdb`` on PATH. The
cluster lives in a new temporary folder, listens on 127.0.0.1 only, on a free port, with trust
authentication, and is removed when stopped. As root it runs as the ``postgres`` user, since
PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


class ServerUnavailable(RuntimeError):
    """No PostgreSQL server can be started here; the message says why."""


def find_bin() -> Path:
    """Return the folder holding ``initdb`` and ``pg_ctl``.

    Raises:
        ServerUnavailable: none is installed.
    """
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise ServerUnavailable(
        "no PostgreSQL server binaries (initdb) found; install them with "
        "`apt-get install postgresql` (Debian) or put initdb on PATH"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalPostgres:
    """A running throwaway server."""

    url: str
    """``postgresql://postgres@127.0.0.1:<port>/postgres``."""
    data: Path
    bindir: Path
    run_as: list[str]

    def stop(self) -> None:
        """Stop the server and delete its folder."""
        pg_ctl = [*self.run_as, str(self.bindir / "pg_ctl")]
        subprocess.run(
            [*pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            check=False,
            timeout=60,
        )
        shutil.rmtree(self.data.parent, ignore_errors=True)


def start_postgres(*, durable: bool = True) -> LocalPostgres:
    """Start a server in a new temporary folder and return it once it accepts connections.

    Args:
        durable: keep fsync on (benchmarks); off for tests, which never survive a power loss.

    Raises:
        ServerUnavailable: no binaries, no unprivileged user to run them as, or the server
            failed to start (the message carries its log).
    """
    bindir = find_bin()
    run_as: list[str] = []
    owner: pwd.struct_passwd | None = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise ServerUnavailable(
                "running as root and there is no 'postgres' user to run the server as"
            ) from None
        run_as = ["runuser", "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    data = root / "data"
    if owner is not None:
        os.chown(root, owner.pw_uid, owner.pw_gid)
    port = _free_port()
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=60"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    steps = [
        [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
         "--no-sync"],
        [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log"), "-o", options,
         "-w", "-t", "60", "start"],
    ]  # fmt: skip
    for step in steps:
        done = subprocess.run([*run_as, *step], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            shutil.rmtree(root, ignore_errors=True)
            raise ServerUnavailable(
                f"{Path(step[0]).name} failed ({done.returncode}): "
                f"{(done.stderr or done.stdout).strip()[-1000:]} {tail}"
            )
    return LocalPostgres(f"postgresql://postgres@127.0.0.1:{port}/postgres", data, bindir, run_as)


@contextmanager
def running_postgres(*, durable: bool = True) -> Iterator[LocalPostgres]:
    """Start a server for the block and stop it after."""
    server = start_postgres(durable=durable)
    try:
        yield server
    finally:
        server.stop()
