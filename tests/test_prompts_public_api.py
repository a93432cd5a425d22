"""The public API of `prompts` is pinned: sorted, complete, importable, one-way imports."""

from __future__ import annotations

import subprocess
import sys

import prompts


def test_all_is_sorted_and_unique() -> None:
    """__all__ is sorted (constants, classes, functions) and has no repeats."""
    names = prompts.__all__
    assert len(names) == len(set(names))

    def key(name: str) -> tuple[int, str]:
        kind = 0 if name.isupper() else 1 if name[0].isupper() else 2
        return kind, name

    assert names == sorted(names, key=key)


def test_public_names_are_exported() -> None:
    """Every public name the package imports (other than submodules) is listed in __all__.

    The root loads its names on first use, so each is touched first; then nothing else is there.
    """
    for name in prompts.__all__:
        getattr(prompts, name)
    public = {n for n in vars(prompts) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(prompts, n)).__name__ == "module"}
    assert public - modules - {"annotations"} == set(prompts.__all__)


def test_core_names_present() -> None:
    """The names the issue asks for are part of the API."""
    core = {
        "Mode", "BUILTIN_MODES", "load_modes", "ToolCatalog", "PromptBuilder", "Environment",
        "openai_request", "anthropic_request", "policy_table", "switch_mode", "openai_tool",
        "anthropic_tool", "task_tool_spec", "tool_refusal", "responses_request",
        "responses_input", "compaction_backend", "record_server_compaction",
    }  # fmt: skip
    assert core <= set(prompts.__all__)


def test_compaction_never_imports_prompts() -> None:
    """Importing compaction loads neither prompts nor harness."""
    code = (
        "import sys, compaction; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('prompts', 'harness')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
