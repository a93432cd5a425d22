"""Options and wiring of the LLM summarizer for `harness compact --summarizer openai`.

The summary call replays the request the model would receive now: the one `harness context`
prints for the same log and prompt options (mode, tools, environment), built by
`prompts.openai_request`. The API key is read from the environment variable ``--api-key-env``
names, never from the command line. httpx (the ``llm`` extra) is imported only when the openai
summarizer is chosen, so every other command runs without it.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

from compaction import ConfigError, Session, Summarizer, TurnStarted
from harness.commands.env_options import openai_base_url, with_env
from harness.commands.prompt_cmd import LOG_MODE_DEFAULT, add_prompt_options, builder_from_args
from prompts import DEFAULT_MODE, available_modes, get_mode, openai_request

if TYPE_CHECKING:
    from compaction.summarizers import OpenAISummarizer


def add_openai_options(p: argparse.ArgumentParser) -> None:
    """Add the endpoint, model and prompt options of ``--summarizer openai``."""
    g = p.add_argument_group(
        "openai summarizer",
        "an OpenAI-compatible chat-completions endpoint (DeepSeek, OpenAI, vLLM, Ollama...); "
        "the summary call replays the request `harness context` would print, plus one message",
    )
    g.add_argument(
        "--base-url",
        metavar="URL",
        help=with_env("API root, e.g. https://api.deepseek.com", "OPENAI_BASE_URL"),
    )
    g.add_argument("--model", metavar="M", help="model name, e.g. deepseek-chat")
    g.add_argument(
        "--api-key-env",
        metavar="VAR",
        default=None,
        help="environment variable holding the API key; unset = no key (OPENAI_API_KEY; "
        "with --backend anthropic, or auto picking it, ANTHROPIC_API_KEY)",
    )
    g.add_argument("--timeout", type=float, default=60.0, help="seconds per attempt (60)")
    g.add_argument("--max-retries", type=int, default=3, help="retries on 429/5xx/timeout (3)")
    g.add_argument(
        "--max-output-tokens", type=int, default=4096, help="cap on the summary's tokens (4096)"
    )
    add_prompt_options(p, mode_default=LOG_MODE_DEFAULT)


def session_mode(session: Session) -> str:
    """Return the mode of the latest ``turn/start`` that names one, else the default mode."""
    mode = DEFAULT_MODE
    for event in session.events():
        if isinstance(event, TurnStarted) and event.data.mode:
            mode = event.data.mode
    return mode


def openai_summarizer(args: argparse.Namespace, session: Session) -> OpenAISummarizer:
    """Return the summarizer the options describe, replaying the session's current request.

    Raises:
        ConfigError: ``--base-url`` or ``--model`` missing, or a bad value.
    """
    base_url = openai_base_url(args.base_url)
    given = (("--base-url", base_url), ("--model", args.model))
    missing = [flag for flag, value in given if not value]
    if missing or base_url is None:
        raise ConfigError(f"--summarizer openai needs {' and '.join(missing)}")
    key_env = args.api_key_env or "OPENAI_API_KEY"
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", key_env):
        # Never echo the value: a key pasted here by mistake must not reach the terminal.
        raise ConfigError(
            "--api-key-env takes the NAME of an environment variable holding the key "
            "(e.g. OPENAI_API_KEY), not the key itself"
        )
    try:
        from compaction.llm import ChatClient, ChatConfig
        from compaction.summarizers import OpenAISummarizer
    except ImportError as exc:
        raise ConfigError(
            f"--summarizer openai needs httpx ({exc}): pip install 'context-harness[llm]'"
        ) from None
    config = ChatConfig(
        base_url=base_url,
        model=args.model,
        api_key_env=key_env,
        timeout=args.timeout,
        max_retries=args.max_retries,
        max_output_tokens=args.max_output_tokens,
    )
    mode = get_mode(args.mode or session_mode(session), available_modes(args.modes_file))
    request = openai_request(builder_from_args(args), mode, session)
    return OpenAISummarizer(ChatClient(config), request, tokenizer=session.tokenizer)


def finish(summarizer: Summarizer, session: Session, *, dry_run: bool) -> list[dict[str, Any]]:
    """Append the summary calls' usage to the log (not on a dry run); return it as JSON data."""
    if summarizer.name != "openai":
        return []
    from compaction.summarizers import OpenAISummarizer, record_usage

    assert isinstance(summarizer, OpenAISummarizer)
    # cache_write_tokens only when the provider reported it (Anthropic); cached_tokens always;
    # a summary call carries no request time (only the host's own requests do).
    optional = ("cache_write_tokens", "at", "context_seq")
    reports = [
        r.model_dump(mode="json", exclude={k for k in optional if getattr(r, k) is None})
        for r in summarizer.reports
    ]
    if dry_run:
        summarizer.reports.clear()
    else:
        record_usage(session, summarizer)
    return reports


def usage_line(report: dict[str, Any]) -> str:
    """Return one line on a summary call's usage, with the provider's cache-hit share."""
    prompt, cached = report["prompt_tokens"], report["cached_tokens"]
    share = f" ({cached / prompt:.1%})" if cached is not None and prompt else ""
    cache = "not reported" if cached is None else f"{cached}{share}"
    return (
        f"summary call ({report['model']}): {prompt} prompt tokens, cached {cache}, "
        f"{report['completion_tokens']} completion tokens"
    )
