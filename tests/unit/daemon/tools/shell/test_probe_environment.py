"""The daemon's bubblewrap probe runs with the tool allow-list of the environment, never
the daemon's keys (issue 25, item 20: what each child of the daemon gets)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from coding_harness.daemon.tools.shell import sandbox


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    sandbox.probe.cache_clear()
    yield
    sandbox.probe.cache_clear()


def test_the_bwrap_probe_gets_no_secret_of_the_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    seen = tmp_path / "env.txt"
    fake = tmp_path / "bwrap"
    fake.write_text(
        f"#!{sys.executable}\nimport os\n"
        f"open({str(seen)!r}, 'w').write('\\n'.join(sorted(os.environ)))\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-daemon-only")
    monkeypatch.setenv("DATABASE_URL", "postgres://secret")
    assert sandbox.probe().usable
    names = seen.read_text().split()
    assert "PATH" in names
    assert "OPENAI_API_KEY" not in names and "DATABASE_URL" not in names
