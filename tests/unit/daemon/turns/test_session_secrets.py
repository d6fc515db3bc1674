"""A turn's secrets are kept from turn to turn, and found again when the keys the
client sent or the daemon's own environment change."""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.daemon.config.loader import load_config
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.turns.assemble import session_secrets


def test_secrets_are_kept_and_follow_changed_keys_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(tmp_path, tmp_path)
    session = Session(id="s1", cwd=tmp_path, key_env={"OPENAI_API_KEY": "sk-first-key-value"})
    first = session_secrets(session, config)
    assert first.redact("x sk-first-key-value y") == "x [redacted] y"
    assert session_secrets(session, config) is first  # the next turn: kept

    session.key_env["OPENAI_API_KEY"] = "sk-second-key-value"  # a new shell sent another
    assert session_secrets(session, config).redact("sk-second-key-value") == "[redacted]"

    monkeypatch.setenv("DEPLOY_TOKEN", "tok-daemon-environment-1")
    changed = session_secrets(session, config)
    assert changed.redact("tok-daemon-environment-1") == "[redacted]"
