"""Which check runs after an applied edit: the one configured, else the project's own.

`agent.check_command` (the global file, or a project file the user trusted)
names it: a string runs through `/bin/sh -c` (so `pytest -q && mypy .` works),
a list runs as it is. Without it the project's own is found, the first of:

1. a makefile target `check`, then `test` (`make check`, `make test`);
2. pytest: pytest.ini, conftest.py, `[tool.pytest...]` in pyproject.toml,
   `[tool:pytest]` in setup.cfg, `[pytest]` in tox.ini, or test files
   (`test_*.py`, `*_test.py`) at the root or in `tests/` or `test/`; run by the
   project's own virtualenv (`.venv`, `venv`) when it has one, else `python3`;
3. `npm test`, when package.json has a test script other than npm's placeholder;
4. `cargo test` beside Cargo.toml;
5. `go test ./...` beside go.mod.

None of these: no check, and the turn says "not verified". Files are read as
the file tools read them (visible, regular, inside the workspace).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.tools.build_files import MAKEFILE_NAMES, included_files
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.files import read_regular
from coding_harness.daemon.tools.workspace import Workspace

CONFIGURED = "agent.check_command"
_READ_LIMIT = 1_000_000
# A rule's targets: `check:` or `lint check test: deps`, never `check := value`.
_RULE = re.compile(r"^([A-Za-z0-9_.%/ \t-]+?)[ \t]*::?(?!=)", re.MULTILINE)
_NPM_PLACEHOLDER = "no test specified"
_PYTEST_SECTIONS = (
    ("pyproject.toml", "[tool.pytest"),
    ("setup.cfg", "[tool:pytest]"),
    ("tox.ini", "[pytest]"),
)
_TEST_FILE = re.compile(r"(?:test_\w*|\w+_test)\.py")
_VENVS = (".venv", "venv")


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckCommand:
    """The check and why it was chosen."""

    argv: tuple[str, ...]
    source: str  # "agent.check_command", "Makefile target check", "pytest files", ...
    label: str  # how people read it: `make check`, `pytest -q && mypy .`


def configured_check(value: str | tuple[str, ...]) -> CheckCommand:
    """The check `agent.check_command` names."""
    if isinstance(value, str):
        return CheckCommand(argv=("/bin/sh", "-c", value), source=CONFIGURED, label=value)
    return CheckCommand(argv=value, source=CONFIGURED, label=shlex.join(value))


def choose_check(root: Path, configured: str | tuple[str, ...] | None) -> CheckCommand | None:
    """The check for the workspace `root`: the configured one, else the first found."""
    if configured:
        return configured_check(configured)
    for find in (_make_target, _pytest, _npm, _cargo, _go):
        found = find(root)
        if found is not None:
            return found
    return None


def _make_target(root: Path) -> CheckCommand | None:
    makefile = next((name for name in MAKEFILE_NAMES if _read(root, name) is not None), None)
    if makefile is None:
        return None
    targets: set[str] = set()
    for rel in (makefile, *sorted(included_files(root))):
        text = _read(root, rel) or ""
        for names in _RULE.findall(text):
            targets.update(names.split())
    for target in ("check", "test"):
        if target in targets:
            label = f"make {target}"
            return CheckCommand(
                argv=("make", target), source=f"{makefile} target {target}", label=label
            )
    return None


def _pytest(root: Path) -> CheckCommand | None:
    if not _uses_pytest(root):
        return None
    python = next(
        (f"{venv}/bin/python" for venv in _VENVS if (root / venv / "bin" / "python").is_file()),
        "python3",
    )
    argv = (python, "-m", "pytest", "-q")
    return CheckCommand(argv=argv, source="pytest files", label=shlex.join(argv))


def _uses_pytest(root: Path) -> bool:
    if any(_read(root, name) is not None for name in ("pytest.ini", "conftest.py")):
        return True
    for name, section in _PYTEST_SECTIONS:
        if section in (_read(root, name) or ""):
            return True
    for folder in (root, root / "tests", root / "test"):
        try:
            if any(_TEST_FILE.fullmatch(entry.name) for entry in folder.iterdir()):
                return True
        except OSError:
            continue
    return False


def _npm(root: Path) -> CheckCommand | None:
    text = _read(root, "package.json")
    if text is None:
        return None
    try:
        scripts = json.loads(text).get("scripts") or {}
    except (ValueError, AttributeError):
        return None
    test = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(test, str) or not test.strip() or _NPM_PLACEHOLDER in test:
        return None
    return CheckCommand(argv=("npm", "test"), source="package.json test script", label="npm test")


def _cargo(root: Path) -> CheckCommand | None:
    if _read(root, "Cargo.toml") is None:
        return None
    return CheckCommand(argv=("cargo", "test"), source="Cargo.toml", label="cargo test")


def _go(root: Path) -> CheckCommand | None:
    if _read(root, "go.mod") is None:
        return None
    return CheckCommand(argv=("go", "test", "./..."), source="go.mod", label="go test ./...")


def _read(root: Path, rel: str) -> str | None:
    """A visible regular file inside the workspace, as text; None when there is none."""
    if not (root / rel).exists():
        return None
    try:
        real = Workspace(root).resolve_visible(rel)
        data, _ = read_regular(real, rel, _READ_LIMIT)
    except (ToolRefusal, OSError):
        return None
    return data.decode("utf-8", "replace")
