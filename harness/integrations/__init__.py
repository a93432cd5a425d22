"""Integrations: this toolkit's session log behind other agent frameworks' interfaces.

Each adapter imports only the package roots (`compaction`, `prompts`) and its framework, which
comes with an extra: ``pip install 'context-harness[agents]'`` for the OpenAI Agents SDK
(`harness.integrations.openai_agents`), ``pip install 'context-harness[langchain]'`` for
LangChain v1 (`harness.integrations.langchain_agents`). Import the adapter module itself; this
package imports none of them, so it costs nothing when a framework is absent.
"""

__all__: list[str] = []
