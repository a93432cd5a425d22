"""An adapter whose framework is missing says which extra to install, in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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


def test_a_too_old_langchain_names_the_extra() -> None:
    """A langchain whose AgentMiddleware takes two type parameters (before 1.2.9): one line."""
    code = (
        "from typing import Generic, TypeVar\n"
        "import langchain.agents.middleware as middleware\n"
        "S, C = TypeVar('S'), TypeVar('C')\n"
        "class AgentMiddleware(Generic[S, C]): pass\n"
        "middleware.AgentMiddleware = AgentMiddleware\n"
        "try:\n"
        "    import harness.integrations.langchain_agents\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines() == [
        "harness.integrations.langchain_agents needs langchain>=1.2.9: "
        "pip install 'context-harness[langchain]'"
    ]
