"""Key Technical Concepts ranks names every project of a language uses after the project's own.

Shape from the shared entire-cli Go sessions: the agent's statements and edits repeat
``fmt.Errorf`` and ``t.Fatalf`` far more often than the project's ``maxSessionCheck``.
"""

from __future__ import annotations

import json

import pytest

from compaction import ExtractiveSummarizer, FunctionCall, Message, Section, SummaryInput, ToolCall
from compaction.summarizers import check_output
from compaction.summarizers._common_names import is_common
from compaction.summarizers.facts import read_span


def go_session() -> list[Message]:
    body = 'if err != nil { return fmt.Errorf("diff: %w", err) }\nt.Fatalf("got %v", got)'
    messages = [Message(role="user", content="Fix maxSessionCheck so it returns true at the limit")]
    for n in range(4):
        args = json.dumps({"file_path": "/r/wingman.go", "old_string": "x", "new_string": body})
        fn = FunctionCall(name="Edit", arguments=args)
        messages.append(Message(role="assistant", tool_calls=(ToolCall(id=f"e{n}", function=fn),)))
        messages.append(Message(role="tool", tool_call_id=f"e{n}", content="ok"))
        messages.append(
            Message(role="assistant", content="Wrapped it with fmt.Errorf; t.Fatalf next.")
        )
    messages.append(Message(role="assistant", content="maxSessionCheck now returns true."))
    return messages


class TestCommonNames:
    @pytest.mark.parametrize(
        ("term", "common"),
        [
            ("fmt.Errorf", True),
            ("t.Fatalf", True),
            ("require.NoError", True),
            ("os.path.join", True),
            ("self.assertEqual", True),
            ("console.log", True),
            ("__init__", True),
            ("maxSessionCheck", False),
            ("SessionLog", False),
            ("strategy.ListSessions", False),
        ],
    )
    def test_is_common(self, term: str, common: bool) -> None:
        """Standard-library and test-helper names are common; the project's are not."""
        assert is_common(term) is common

    def test_project_terms_rank_first(self) -> None:
        """More frequent standard names still rank after the project's own term."""
        terms = read_span(go_session()).terms
        assert terms.index("maxSessionCheck") < terms.index("fmt.Errorf")
        assert terms.index("maxSessionCheck") < terms.index("t.Fatalf")

    def test_a_small_budget_keeps_the_project_term(self) -> None:
        """When Key Technical Concepts has room for one line, it is the project's term."""
        messages = tuple(go_session())
        span = SummaryInput(
            messages=messages,
            seqs=tuple(range(1, len(messages) + 1)),
            previous=None,
            todos=(),
            budget_tokens=90,
        )
        concepts = check_output(ExtractiveSummarizer().summarize(span), span)[Section.KEY_CONCEPTS]
        assert concepts.split("\n")[-1] == "- `maxSessionCheck`"
        assert "fmt.Errorf" not in concepts
