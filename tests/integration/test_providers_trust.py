"""`harness trust` end to end: a project file that moves requests elsewhere is held back
until the user trusts it, and trust ends when the file changes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.processes import run_harness


def harness(
    sandbox: Sandbox, *args: str, input: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=cwd or sandbox.workspace, input=input)


def project_file(sandbox: Sandbox, data: object) -> Path:
    path = sandbox.workspace / ".local_coding_harness.json"
    path.write_text(json.dumps(data))
    return path


def test_trust_flow(sandbox: Sandbox, model: FakeModelServer) -> None:
    with FakeModelServer() as elsewhere:
        project_file(
            sandbox,
            {"providers": {"fake": {"endpoint": elsewhere.endpoint, "model": "proj-model"}}},
        )
        model.add(Reply(content="from the user's server"))
        untrusted = harness(sandbox, "-p", "hi")
        assert untrusted.returncode == 0, untrusted.stderr
        assert "from the user's server" in untrusted.stdout
        assert model.requests[-1]["model"] == "proj-model"  # a model change needs no trust
        assert "providers.fake.endpoint" in untrusted.stderr
        assert "harness trust" in untrusted.stderr
        assert elsewhere.requests == []

        declined = harness(sandbox, "trust", input="n\n")
        assert declined.returncode == 1
        assert "providers.fake.endpoint" in declined.stderr and "needs trust" in declined.stderr

        accepted = harness(sandbox, "trust", input="y\n")
        assert accepted.returncode == 0, accepted.stderr
        assert "trusted" in accepted.stderr
        elsewhere.add(Reply(content="from the project's server"))
        trusted = harness(sandbox, "-p", "hi")
        assert trusted.returncode == 0, trusted.stderr
        assert "from the project's server" in trusted.stdout
        assert "harness trust" not in trusted.stderr
        assert harness(sandbox, "trust").stderr.strip().endswith("is already trusted, as it is now")

        # Any change to the file ends the trust.
        project_file(
            sandbox,
            {"providers": {"fake": {"endpoint": elsewhere.endpoint, "model": "other-model"}}},
        )
        model.add(Reply(content="back home"))
        changed = harness(sandbox, "-p", "hi")
        assert "back home" in changed.stdout and "harness trust" in changed.stderr
        assert len(elsewhere.requests) == 1


def test_trust_yes_and_revoke(sandbox: Sandbox, model: FakeModelServer) -> None:
    project_file(sandbox, {"providers": {"fake": {"endpoint": "https://other.example/v1"}}})
    assert harness(sandbox, "trust", "--yes").returncode == 0
    store = sandbox.root / "state" / "coding-harness" / "trusted_workspaces.json"
    entries = json.loads(store.read_text())
    assert ".local_coding_harness.json" in entries[str(sandbox.workspace.resolve())]
    assert harness(sandbox, "trust", "--revoke").returncode == 0
    assert json.loads(store.read_text()) == {}


def test_trust_without_a_project_file_or_with_bad_arguments(sandbox: Sandbox) -> None:
    missing = harness(sandbox, "trust")
    assert missing.returncode == 1 and "nothing to trust" in missing.stderr
    project_file(sandbox, {})
    assert harness(sandbox, "trust", "--everything").returncode == 5
    (sandbox.workspace / ".local_coding_harness.json").write_text("{nope")
    broken = harness(sandbox, "trust", input="y\n")
    assert broken.returncode == 1 and "not valid JSON" in broken.stderr
