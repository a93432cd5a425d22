"""The sessions the peers replay, written as exchange files: the generated ones and the real ones.

Invariants: the same arguments write the same files, in the same order.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.peers.metrics import load_exchange_dict
from benchmarks.splits import EVALUATION, TUNING

SESSION_SETS = ("all", "synthetic", "real")
"""Which sessions a run takes: the generated ones, the shared real transcripts, or both."""


def default_sessions(
    work_dir: Path, *, quick: bool = False, which: str = "all", generated: int | None = None
) -> list[Path]:
    """Write the benchmark sessions as exchange files in `work_dir` and return their paths.

    The generated sessions, then the shared real transcripts (`benchmarks.replay.real_transcripts`:
    the same sessions our strategies replay, named for where each came from; a quick run takes the
    one short transcript); `which` picks one set (`SESSION_SETS`); `generated` keeps the first
    that many generated sessions (all by default).
    """
    from benchmarks.replay import real_transcripts
    from harness.simulation import dump_exchange, generate

    shapes = [] if which == "real" else [(4, 0)] if quick else [*TUNING, *EVALUATION]
    shapes = shapes[:generated] if generated is not None else shapes
    real = None if which == "synthetic" else real_transcripts.QUICK_SESSIONS if quick else None
    paths = []
    for turns, seed in shapes:
        name = f"synthetic-t{turns}-s{seed}"
        path = work_dir / f"{name}.json"
        dump_exchange(generate(turns, seed), path, name=name, turns=turns, seed=seed)
        paths.append(path)
    if which != "synthetic":
        paths += real_transcripts.write_exchanges(work_dir, sessions=real)
    return paths


def session_name(path: Path) -> str:
    """Return a session's name: its ``meta.name``, else the file stem."""
    meta = load_exchange_dict(path).get("meta") or {}
    return str(meta.get("name") or path.stem)
