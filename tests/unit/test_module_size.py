"""No module in the package grows past 350 lines.

STYLE.md aims for modules under ~300 lines; past 350 a module has more than one
job and should be split by job. The test reads every `.py` file under
protocol/, daemon/ and client/ and names each one over the limit with its length.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("protocol", "daemon", "client")
LIMIT = 350


def line_count(path: Path) -> int:
    return len(path.read_text().splitlines())


def module_lengths() -> dict[str, int]:
    return {
        path.relative_to(ROOT).as_posix(): line_count(path)
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
    }


def over_limit(lengths: dict[str, int], limit: int = LIMIT) -> list[str]:
    return [f"{name}: {count} lines" for name, count in sorted(lengths.items()) if count > limit]


def test_no_module_is_over_the_limit() -> None:
    lengths = module_lengths()
    # The walk found the package (an empty walk has nothing over the limit either).
    assert len(lengths) > 150
    assert "daemon/agent/loop.py" in lengths
    over = over_limit(lengths)
    assert over == [], f"modules over {LIMIT} lines (split them by job): " + "; ".join(over)


def test_over_limit_names_each_file_and_its_length(tmp_path: Path) -> None:
    path = tmp_path / "long.py"
    path.write_text("x = 1\n" * 351)
    assert line_count(path) == 351
    lengths = {"a.py": 350, "b.py": 351, "c.py": 10, "d.py": 400}
    assert over_limit(lengths) == ["b.py: 351 lines", "d.py: 400 lines"]
