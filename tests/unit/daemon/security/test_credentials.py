"""Keys read from `$CREDENTIALS_DIRECTORY` (systemd LoadCredential=) into the key lookup."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from coding_harness.daemon.security.credentials import MAX_CREDENTIAL_BYTES, load_credentials


def credential(folder: Path, name: str, data: bytes | str, mode: int = 0o600) -> Path:
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    path.chmod(mode)
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "credentials"
    path.mkdir(mode=0o700)
    return path


def test_each_variable_named_file_becomes_a_variable(folder: Path) -> None:
    credential(folder, "OPENAI_API_KEY", "sk-from-file-123\n")
    credential(folder, "MODEL_PASS", "  pass-from-file-456  ")
    env = {"CREDENTIALS_DIRECTORY": str(folder)}
    assert load_credentials(env) == ["MODEL_PASS", "OPENAI_API_KEY"]
    assert env["OPENAI_API_KEY"] == "sk-from-file-123"
    assert env["MODEL_PASS"] == "pass-from-file-456"


def test_nothing_happens_without_the_folder_variable() -> None:
    env: dict[str, str] = {}
    assert load_credentials(env) == []
    assert env == {}


def test_the_environment_wins_and_says_so(folder: Path, caplog: pytest.LogCaptureFixture) -> None:
    credential(folder, "OPENAI_API_KEY", "from-file-value")
    env = {"CREDENTIALS_DIRECTORY": str(folder), "OPENAI_API_KEY": "from-env-value"}
    with caplog.at_level(logging.WARNING):
        assert load_credentials(env) == []
    assert env["OPENAI_API_KEY"] == "from-env-value"
    assert "OPENAI_API_KEY not used" in caplog.text
    assert "from-file-value" not in caplog.text


def test_unusable_files_are_skipped_with_a_reason(
    folder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    credential(folder, "OPEN_KEY", "readable-by-anyone", mode=0o644)
    credential(folder, "BIG_KEY", b"x" * (MAX_CREDENTIAL_BYTES + 1))
    credential(folder, "BINARY_KEY", b"\xff\xfe-not-utf8")
    (folder / "LINKED_KEY").symlink_to(credential(tmp_path, "target", "linked-value"))
    credential(folder, "not-a-variable.txt", "ignored-value")
    env = {"CREDENTIALS_DIRECTORY": str(folder)}
    with caplog.at_level(logging.WARNING):
        assert load_credentials(env) == []
    assert set(env) == {"CREDENTIALS_DIRECTORY"}
    assert "chmod 600" in caplog.text
    assert "over 65536 bytes" in caplog.text
    assert "not UTF-8" in caplog.text
    assert "LINKED_KEY not read" in caplog.text
    assert "readable-by-anyone" not in caplog.text


def test_a_missing_folder_is_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    env = {"CREDENTIALS_DIRECTORY": str(tmp_path / "absent")}
    with caplog.at_level(logging.WARNING):
        assert load_credentials(env) == []
    assert "cannot read credentials" in caplog.text
