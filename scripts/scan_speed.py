"""The error-line scan of the summarizers against a tiktoken pass over the same tool outputs.

Three passes over the tool results of the shared transcripts, each in CPU time
(`time.process_time`): raw tiktoken (`encode_ordinary`), the `ERROR_MARK` regex run over each
whole output (how `error_lines` found marked lines before it had literal prefilters), and
`error_lines` itself. Each is reported as a ratio to the tiktoken pass.

Run: ``python scripts/scan_speed.py`` (prints one line; needs ``../shared/transcripts``). It lives
in scripts/, not benchmarks/, because it reads a summarizer module's internals (`ERROR_MARK`).

Invariants: every pass reads the same texts, in the same order, in one process.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from compaction import Message, get_tokenizer
from compaction.importers import load
from compaction.summarizers.facts import ERROR_MARK, error_lines

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = (
    next(
        (
            p
            for p in (ROOT.parent / "shared", ROOT.parents[1] / "shared")
            if (p / "transcripts").is_dir()
        ),
        ROOT.parent / "shared",
    )
    / "transcripts"
)
"""``../shared/transcripts`` of the checkout (or of the folder above, for a worktree)."""


def tool_outputs(folder: Path) -> list[str]:
    """Return the text of every tool result of the transcripts in `folder`, by file name."""
    texts: list[str] = []
    for path in sorted(folder.iterdir()):
        if path.suffix in (".jsonl", ".json", ".traj"):
            texts += [
                e.data.text()
                for e in load(path)
                if isinstance(e.data, Message) and e.data.role == "tool"
            ]
    return texts


def cpu(fn: Callable[[str], object], texts: Sequence[str]) -> float:
    """Return the CPU seconds of calling `fn` on every text."""
    start = time.process_time()
    for text in texts:
        fn(text)
    return time.process_time() - start


def main(argv: Sequence[str] | None = None) -> int:
    """Print the three passes' CPU times and their ratios to tiktoken."""
    parser = argparse.ArgumentParser(prog="python scripts/scan_speed.py")
    parser.add_argument("--transcripts", type=Path, default=TRANSCRIPTS)
    args = parser.parse_args(argv)
    if not args.transcripts.is_dir():
        print(f"no transcripts at {args.transcripts}")
        return 2
    texts = tool_outputs(args.transcripts)
    tok = get_tokenizer()
    raw = cpu(tok.encode, texts)
    regex = cpu(lambda t: list(ERROR_MARK.finditer(t)), texts)
    scan = cpu(error_lines, texts)
    chars = sum(map(len, texts))
    print(
        f"{len(texts)} tool outputs, {chars:,} characters: tiktoken {raw:.3f} s; whole-text "
        f"regex {regex:.3f} s ({regex / raw:.2f}x); error_lines {scan:.3f} s ({scan / raw:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
