"""The public API of `harness.simulation` is pinned: sorted, complete, importable."""

from __future__ import annotations

import harness.simulation as simulation


def test_all_is_sorted_and_unique() -> None:
    """__all__ is sorted (constants, classes, functions) and has no repeats."""
    names = simulation.__all__
    assert len(names) == len(set(names))

    def key(name: str) -> tuple[int, str]:
        kind = 0 if name.isupper() else 1 if name[0].isupper() else 2
        return kind, name

    assert names == sorted(names, key=key)


def test_public_names_are_exported() -> None:
    """Every public name the package holds (other than submodules) is listed in __all__."""
    for name in simulation.__all__:
        getattr(simulation, name)
    public = {n for n in vars(simulation) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(simulation, n)).__name__ == "module"}
    assert public - modules - {"annotations"} == set(simulation.__all__)


def test_demo_names_present() -> None:
    """What `harness demo` runs is reachable from the root."""
    for name in ("generate", "replay", "run_demo", "STRATEGIES", "PROVIDER_MODELS"):
        assert name in simulation.__all__
