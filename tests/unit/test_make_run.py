"""`make run` says where it runs and runs the REPL in the project named; the README says how.

The Makefile's own `run` target, with a stand-in `harness` (and `python`) in a virtualenv
folder of the test's (its install stamp newer than pyproject.toml, so nothing is installed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    folder = tmp_path / "venv"
    (folder / "bin").mkdir(parents=True)
    fake = folder / "bin" / "harness"
    fake.write_text('#!/bin/sh\necho "REPL in $(pwd)"\n')
    fake.chmod(0o755)
    python = folder / "bin" / "python"  # `make bytecode` compiles with it: nothing to do here
    python.write_text("#!/bin/sh\nexit 0\n")
    python.chmod(0o755)
    stamp = folder / ".installed"
    stamp.touch()
    later = (REPO / "pyproject.toml").stat().st_mtime + 60
    os.utime(stamp, (later, later))
    return folder


def make_run(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make here")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    return subprocess.run(
        [make, "--no-print-directory", "-C", str(REPO), "run", f"VENV={venv}", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_make_run_opens_the_repl_in_the_project_it_names(venv: Path, tmp_path: Path) -> None:
    project = tmp_path / "my project"
    project.mkdir()
    done = make_run(venv, f"PROJECT={project}")
    assert done.returncode == 0, done.stderr
    assert f"harness: working in {project}" in done.stdout
    assert f"REPL in {project}" in done.stdout
    assert "own checkout" not in done.stdout


def test_make_run_in_the_checkout_says_what_that_means(venv: Path) -> None:
    done = make_run(venv)
    assert done.returncode == 0, done.stderr
    assert f"harness: working in {REPO}" in done.stdout
    assert "this is the harness's own checkout" in done.stdout
    assert "make run PROJECT=" in done.stdout


def test_the_readme_says_how_to_use_it_on_your_project_right_after_the_set_up() -> None:
    readme = (REPO / "README.md").read_text()
    after_set_up = readme[readme.index("    make test") :]
    section = after_set_up[: after_set_up.index("\n## ")]
    assert section.index("Use it on your own project") < section.index("Other targets")
    for way in ("make run PROJECT=", '.venv/bin:$PATH"', "uv tool install .", "pipx install ."):
        assert way in section
