"""An adapter whose framework is missing says which extra to install, in one line."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Generic, TypeVar

import pytest

ROOT = Path(__file__).resolve().parents[2]
S = TypeVar("S")
C = TypeVar("C")


class OldAgentMiddleware(Generic[S, C]):
    """langchain's AgentMiddleware before 1.2.9: two type parameters, no response type."""


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("openai_agents", "agents", "agents"),
        ("langchain_agents", "langchain", "langchain"),
    ],
)
def test_missing_framework_names_the_extra(module: str, framework: str, extra: str) -> None:
    """Importing the adapter without its framework raises ImportError naming the pip extra."""
    code = (
        f"import sys; sys.modules[{framework!r}] = None\n"
        "try:\n"
        f"    import harness.integrations.{module}\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == [
        f"harness.integrations.{module} needs "
        f"{'openai-agents>=0.19' if extra == 'agents' else 'langchain>=1.2.9'}: "
        f"pip install 'context-harness[{extra}]'"
    ]


def test_a_too_old_langchain_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """A langchain whose AgentMiddleware takes two type parameters (before 1.2.9): one line.

    In this process (langchain is imported here anyway): the adapter is imported afresh with
    AgentMiddleware swapped, and both are put back afterwards.
    """
    middleware = pytest.importorskip("langchain.agents.middleware")
    monkeypatch.setattr(middleware, "AgentMiddleware", OldAgentMiddleware)
    monkeypatch.delitem(sys.modules, "harness.integrations.langchain_agents", raising=False)
    with pytest.raises(ImportError) as caught:
        importlib.import_module("harness.integrations.langchain_agents")
    assert str(caught.value) == (
        "harness.integrations.langchain_agents needs langchain>=1.2.9: "
        "pip install 'context-harness[langchain]'"
    )


@pytest.mark.parametrize(
    "module", ["harness.integrations.langchain_agents", "harness.integrations.openai_agents"]
)
def test_an_integration_does_not_load_the_cli(module: str) -> None:
    """Importing an adapter loads neither the CLI nor its commands, output or the simulation."""
    code = (
        f"import sys, {module}; "
        f"print({module!r} in sys.modules, sorted(m for m in sys.modules if m.startswith(("
        "'harness.cli', 'harness.commands', 'harness.simulation', 'harness.output'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "True []"
