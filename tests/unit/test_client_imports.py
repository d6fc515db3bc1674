"""The one-shot path stays lean; imports point client -> protocol <- daemon."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("prompt_toolkit", "rich", "httpx", "jsonrpcserver", "coding_harness.daemon")


def test_oneshot_path_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "import coding_harness.client.cli, coding_harness.client.oneshot\n"
        "import coding_harness.client.daemon_control, coding_harness.client.sessions_list\n"
        f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _imports(folder: str) -> set[str]:
    found: set[str] = set()
    for path in (ROOT / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return found


def test_dependencies_point_one_way() -> None:
    assert not any(m.startswith("coding_harness.daemon") for m in _imports("client"))
    assert not any(m.startswith(("coding_harness.client",)) for m in _imports("daemon"))
    protocol = _imports("protocol")
    assert not any(
        m.startswith(("coding_harness.daemon", "coding_harness.client")) for m in protocol
    )
    third_party = {"httpx", "rich", "prompt_toolkit", "jsonrpcserver", "psutil"}
    assert not {m.split(".")[0] for m in protocol} & third_party


def test_every_package_folder_is_listed_in_pyproject() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    for init in ROOT.glob("*/**/__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if rel.parts[0] not in ("protocol", "daemon", "client"):
            continue
        package = "coding_harness." + ".".join(rel.parts)
        assert f'"{package}"' in text, f"{package} missing from [tool.setuptools] packages"


def test_version_matches_pyproject() -> None:
    from coding_harness.protocol.version import __version__

    assert f'version = "{__version__}"' in (ROOT / "pyproject.toml").read_text()
