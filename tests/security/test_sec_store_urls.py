"""Issue 25, cases 1 and 12: a store URL's password and an echoed API key never reach the screen.

The throwaway PostgreSQL server trusts every local connection, so a URL may carry any password:
the server ignores it, and the CLI must never print it (stdout tables and JSON, stderr errors,
libpq's own messages).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import redact
from compaction.secrets import REDACTED, passwords_in, redact_url

PASSWORD = "Pw-9x-SECRETVALUE"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://bob:s3cret@db:5432/x", "postgresql://bob:***@db:5432/x"),
        ("postgresql://bob:p@ss@db/x", "postgresql://bob:***@db/x"),
        ("postgresql://bob:p%40ss@db/x", "postgresql://bob:***@db/x"),
        ("postgresql://:s3cret@db/x", "postgresql://:***@db/x"),
        ("postgresql://db/x?password=s3cret", "postgresql://db/x?password=***"),
        (
            "postgresql://db/x?sslmode=require&PASSWORD=s3cret&user=a",
            "postgresql://db/x?sslmode=require&PASSWORD=***&user=a",
        ),
        ("host=db password=s3cret user=a", "host=db password=*** user=a"),
        ("host=db password='a s3cret' user=a", "host=db password=*** user=a"),
        ("host=db password = s3cret", "host=db password = ***"),
    ],
)
def test_redact_url_removes_every_password_form(url: str, shown: str) -> None:
    """Userinfo, query and keyword passwords are all replaced; the rest stays readable."""
    assert redact_url(url) == shown
    assert "s3cret" not in redact(url)


@pytest.mark.parametrize(
    "url", ["postgresql://bob@db:5432/x", "sqlite:///a.db", "jsonl:///tmp/x", "s.jsonl"]
)
def test_redact_url_leaves_urls_without_a_password(url: str) -> None:
    """A URL with no password comes back unchanged."""
    assert redact_url(url) == url


PASSWORD_NAMES = ["password", "pwd", "passwd", "sslpassword", "PassWord", "SSLPASSWORD"]
URI_ONLY_NAMES = ["pass%77ord", "%70assword", "ssl%70assword", "password%20"]
"""Names libpq percent-decodes in a URI's query (not in the keyword form)."""


def _query_forms(name: str) -> list[str]:
    return [
        f"postgresql://db/x?{name}=s3cret",
        f"postgresql://db/x?sslmode=require&{name}=s3cret&user=a",
        f"postgresql://db/x?{name}=s3cret#frag",
        f"postgresql://db/x?{name}=s3%26cret",
    ]


def _keyword_forms(name: str) -> list[str]:
    return [
        f"host=db {name}=s3cret user=a",
        f"{name}=s3cret",
        f"host=db {name} = s3cret",
        f"host=db {name}='s3 cret' user=a",
        f"host=db {name}='it\\'s s3cret'",
        f'host=db {name}="s3cret" user=a',
    ]


@pytest.mark.parametrize(
    "url",
    [u for n in PASSWORD_NAMES for u in _query_forms(n) + _keyword_forms(n)]
    + [u for n in URI_ONLY_NAMES for u in _query_forms(n)],
)
def test_every_password_key_is_redacted_in_query_and_keyword_form(url: str) -> None:
    """Each password name, in a URL's query and in libpq's keyword form, loses its value."""
    for shown in (redact_url(url), redact(url)):
        assert "s3" not in shown, shown
        assert ("***" in shown) or (REDACTED in shown)
    assert any("s3" in found for found in passwords_in(url))


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://db/x?passfile=/home/a/.pgpass",
        "postgresql://db/x?sslmode=require&user=pwdless",
        "host=db user=passwd_admin dbname=pwd",
    ],
)
def test_other_parameters_are_left_alone(url: str) -> None:
    """A name that only contains a password word, or a value that does, is not redacted."""
    assert redact_url(url) == url
    assert passwords_in(url) == []


def test_passwords_in_finds_each_form_decoded() -> None:
    """The passwords a URL holds are found, percent-decoded too, for redacting driver errors."""
    found = passwords_in("postgresql://u:p%40ss@h/d?password=q1w2e3")
    assert {"p%40ss", "p@ss", "q1w2e3"} <= set(found)


KEY = "k3y-VERY-private-0001"


@pytest.mark.parametrize(
    "echo",
    [
        KEY.upper(),
        KEY.lower(),
        KEY.swapcase(),
        base64.b64encode(KEY.encode()).decode(),
        base64.b64encode(KEY.encode()).decode().rstrip("="),
        base64.urlsafe_b64encode(KEY.encode()).decode(),
        base64.b64encode(f"user:{KEY}".encode()).decode(),
        base64.b64encode(f"u:{KEY}".encode()).decode(),
        base64.b64encode(f"ab{KEY}".encode()).decode(),
    ],
)
def test_echoed_key_in_base64_or_other_case_is_redacted(echo: str) -> None:
    """The configured key echoed in another letter case or base64 (any alignment) is removed."""
    out = redact(f"upstream said: {echo!r}", [KEY])
    assert REDACTED in out
    assert KEY.lower() not in out.lower()
    raw = base64.b64encode(KEY.encode()).decode()
    assert raw[2:-4] not in out
    for k in range(3):
        core = base64.b64encode(b"\0" * k + KEY.encode()).decode()[3:-4]
        assert core not in out


def test_short_words_are_not_redacted_as_base64() -> None:
    """Ordinary text around a redacted key survives (no short fragment matches words)."""
    out = redact("the build failed: exit 1", [KEY])
    assert out == "the build failed: exit 1"


@pytest.fixture
def pg_url(postgres_url: str) -> str:
    """The test server's URL with a password in the userinfo (the server ignores it)."""
    return postgres_url.replace("postgres@", f"postgres:{PASSWORD}@", 1)


def _clean(*texts: str) -> None:
    for text in texts:
        assert PASSWORD not in text
        assert PASSWORD.lower() not in text.lower()


def test_sessions_log_and_import_never_print_the_password(pg_url: str) -> None:
    """`import -o`, `sessions` (table, JSON) and `log` show the URL with its password removed."""
    session = "sec-url-1"
    done = run_cli(
        "import", "auto", FIXTURES / "claude_code_small.jsonl", "-o", pg_url,
        "--session", session, "--force", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"].endswith(f"#{session}")
    plain = run_cli(
        "import", "auto", FIXTURES / "claude_code_small.jsonl", "-o", pg_url,
        "--session", session, "--force",
    )  # fmt: skip
    table = run_cli("sessions", pg_url)
    as_json = run_cli("sessions", pg_url, "--json")
    log = run_cli("log", pg_url, "--session", session)
    log_json = run_cli("log", pg_url, "--session", session, "--json")
    for run in (plain, table, as_json, log, log_json):
        assert run.returncode == 0, run.stderr
        _clean(run.stdout, run.stderr)
    assert "postgres:***@" in json.loads(as_json.stdout)["url"]
    assert "postgres:***@" in json.loads(log_json.stdout)["path"]
    assert session in table.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ("log", "{url}"),
        ("todos", "{url}"),
        ("tool", "{url}", "task_list", "--args", "{{}}"),
        ("copy", "{url}", "out.jsonl"),
        ("copy", "{url}", "jsonl:///{tmp}/dst", "--as", "x"),
        ("sessions", "{url}?password={pw}&bogus=1"),
        ("sessions", "postgresql://u:{pw}@127.0.0.1:notaport/db"),
        ("sessions", "postgresql://u:{pw}@127.0.0.1:1/db?connect_timeout=2"),
    ],
)
def test_errors_never_print_the_password(
    argv: tuple[str, ...], pg_url: str, tmp_path: Path
) -> None:
    """'Name the session', copy and libpq's errors say what is wrong without the password."""
    for session in ("sec-url-a", "sec-url-b"):
        run_cli(
            "import", "auto", FIXTURES / "codex_small.jsonl", "-o", pg_url,
            "--session", session, "--force",
        )  # fmt: skip
    args = [a.format(url=pg_url, pw=PASSWORD, tmp=tmp_path) for a in argv]
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode in (2, 3), (done.returncode, done.stdout, done.stderr)
    assert done.stderr.strip()
    assert len(done.stderr.strip().splitlines()) == 1
    _clean(done.stdout, done.stderr)


def test_a_file_path_error_is_unchanged(tmp_path: Path) -> None:
    """Redaction leaves an error about a plain file path as it was (nothing over-redacted)."""
    done = run_cli("log", tmp_path / "missing.jsonl")
    assert done.returncode != 0
    assert str(tmp_path / "missing.jsonl") in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ("sessions", "{kw}"),
        ("log", "{kw}"),
        ("todos", "{kw}"),
        ("copy", FIXTURES / "codex_small.jsonl", "{kw}"),
        ("copy", FIXTURES / "codex_small.jsonl", "{kw}", "--as", "x"),
        ("import", "auto", FIXTURES / "codex_small.jsonl", "-o", "{kw}"),
    ],
)
def test_a_libpq_keyword_string_is_refused_not_taken_for_a_file(
    argv: tuple[str | Path, ...], tmp_path: Path
) -> None:
    """``host=... password=...`` is refused in one line; no file or session holds the password.

    (Found by `python -m benchmarks.attacks.attack_table`: it was opened as a JSONL path, so `copy`
    wrote a file named after it and `sessions` listed the password as the session name.)
    """
    keyword = f"host=127.0.0.1 port=1 dbname=db user=u password={PASSWORD}"
    args = [a.format(kw=keyword) if isinstance(a, str) else a for a in argv]
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "libpq keyword string" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    _clean(done.stdout, done.stderr)
    assert list(tmp_path.iterdir()) == []
