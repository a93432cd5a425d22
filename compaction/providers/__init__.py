"""Provider formats: OpenAI's and Anthropic's messages and the usage figures they report.

- `messages`: `from_openai`, `from_anthropic`, `to_messages` (a provider's message as this
  toolkit's `Message`);
- `usage_reports`: `usage_report` (a response's ``usage`` as a ``usage/report`` event).

Rule of this room: it reads provider shapes into events; it imports no view, store or session.
"""

from compaction.providers.messages import from_anthropic, from_openai, to_messages
from compaction.providers.usage_reports import usage_report

__all__ = ["from_anthropic", "from_openai", "to_messages", "usage_report"]
