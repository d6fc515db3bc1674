"""run_shell's argument rules for make, ls, cat and pwd (command_rules.py): a case per rule.

Every unsafe form is refused before anything runs (each make target leaves a
marker file when it runs, so "nothing ran" is observed); the allowed forms
run. The last tests walk the tables themselves, so a refused option added to
a table is tested in every spelling without another line here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.daemon.tools.shell.command_rules import CAT, LS, MAKE, Option, Syntax
from tests.support.tool_context import build_project, shell

MAKEFILE = (
    "PYTHON = python3\n"
    "check:\n"
    "\t@touch ran-check\n"
    "\t@$(PYTHON) -c 'print(\"checked\")'\n"
    "show:\n"
    "\t@touch ran-show\n"
    "\t@$(CC) --version\n"
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = build_project(tmp_path)
    (project / "Makefile").write_text(MAKEFILE)
    return project


def nothing_ran(root: Path) -> bool:
    return not list(root.glob("ran-*")) and not (root / "pwned").exists()


_ASSIGNED = "variables may not be set on the command line"
_ELSEWHERE = "make runs only the workspace's own makefile"
_UNKNOWN = "is not an option run_shell allows for make"

MAKE_REFUSED = [
    # A command-line variable, whatever its name, value or assignment operator.
    ("make check CC=id", _ASSIGNED),
    ("make show CC=id", _ASSIGNED),
    ('make check "PYTHON=python3 -c \'open(\\"pwned\\", \\"w\\")\'"', _ASSIGNED),
    ("make check NAME=world", _ASSIGNED),
    ("make CC=id check", _ASSIGNED),
    ("make check CC:=id", _ASSIGNED),
    ("make check CC::=id", _ASSIGNED),
    ("make check CC:::=id", _ASSIGNED),
    ("make check CC+=id", _ASSIGNED),
    ("make check CC?=id", _ASSIGNED),
    ("make check CC!=id", _ASSIGNED),
    ("make check 'override CC=id'", _ASSIGNED),
    ("make check 'export CC=id'", _ASSIGNED),
    ("make check SHELL=/bin/sh", _ASSIGNED),
    ("make check MAKEFLAGS=-f/tmp/x", _ASSIGNED),
    ("make check .SHELLFLAGS=-ec", _ASSIGNED),
    ("make check 'CC = id'", _ASSIGNED),
    ("make check =id", _ASSIGNED),
    ("make -- check CC=id", _ASSIGNED),
    # Options that change which makefile, which folder or which variables.
    ("make -f /tmp/evil.mk", _ELSEWHERE),
    ("make -f -", _ELSEWHERE),
    ("make -fevil.mk", _ELSEWHERE),
    ("make -sf evil.mk", "'-f' (in '-sf')"),
    ("make -kf evil.mk", _ELSEWHERE),
    ("make --file=evil.mk", _ELSEWHERE),
    ("make --file evil.mk", _ELSEWHERE),
    ("make --makefile=evil.mk", _ELSEWHERE),
    ("make --fil=evil.mk", _ELSEWHERE),
    ("make --makef evil.mk", _ELSEWHERE),
    ("make -C /", _ELSEWHERE),
    ("make -C ..", _ELSEWHERE),
    ("make -Csub", _ELSEWHERE),
    ("make -sCsub check", _ELSEWHERE),
    ("make --directory=sub", _ELSEWHERE),
    ("make --dir=sub", _ELSEWHERE),
    ("make --direc sub", _ELSEWHERE),
    ("make -I /usr/include check", _ELSEWHERE),
    ("make -I. check", _ELSEWHERE),
    ("make --include-dir=/tmp check", _ELSEWHERE),
    ("make --include=/tmp check", _ELSEWHERE),
    ("make -e check", "environment replace"),
    ("make -se check", "environment replace"),
    ("make --environment-overrides check", "environment replace"),
    ("make --env check", "environment replace"),
    ("make -E x check", "evaluates make text"),
    ("make -Ex check", "evaluates make text"),
    ("make --eval=x check", "evaluates make text"),
    ("make --eval x check", "evaluates make text"),
    ("make --ev=x check", "evaluates make text"),
    ("make --e check", "is not allowed"),  # --environment-overrides or --eval
    ("make --d check", _ELSEWHERE),  # --debug, --directory or --dry-run: one is refused
    ("make --jobserver-auth=3,4 check", "internal plumbing"),
    # Anything not on the allow-list.
    ("make -W check check", _UNKNOWN),
    ("make -t check", _UNKNOWN),
    ("make --touch check", _UNKNOWN),
    ("make --what-if=check check", _UNKNOWN),
    ("make -x check", _UNKNOWN),
    ("make --frobnicate check", _UNKNOWN),
    ("make -kx check", "'-x' (in '-kx')"),
    ("make --no check", "is abbreviated"),
    ("make --keep check", "is abbreviated"),
    ("make --keep-going=1 check", "takes no value"),
    ("make -jx check", "is not a value"),
    ("make -j0 check", "is not a value"),
    ("make --jobs=all check", "is not a value"),
    ("make -Oeverything check", "is not a value"),
    # Targets are held to the workspace like paths.
    ("make ../x", "outside the workspace"),
    ("make .env", "hidden"),
]


@pytest.mark.parametrize(("command", "why"), MAKE_REFUSED)
def test_unsafe_make_forms_are_refused_and_nothing_runs(root: Path, command: str, why: str) -> None:
    result = shell(root, command, auto_approve=True)
    assert result.startswith("refused"), result
    assert why in result
    assert "uid=" not in result
    assert nothing_ran(root)


MAKE_ALLOWED = [
    "make check",
    "make -j 2 check",
    "make -j2 check",
    "make -j check",
    "make --jobs=2 check",
    "make --jobs 2 check",
    "make -kj4 check",
    "make -k check",
    "make --keep-going check",
    "make -s check",
    "make --silent check",
    "make --quiet check",
    "make -sk -j 3 check",
    "make -l 2.5 check",
    "make -O check",
    "make --output-sync=target check",
    "make --no-print-directory check",
    "make -- check",
]


@pytest.mark.parametrize("command", MAKE_ALLOWED)
def test_allowed_make_forms_run(root: Path, command: str) -> None:
    result = shell(root, command)
    assert result == "checked\n(exit 0)"
    assert (root / "ran-check").exists()


@pytest.mark.parametrize(
    "command",
    ["make -n check", "make --just-print check", "make --dry-run check", "make -sn check"],
)
def test_make_dry_run_options_are_allowed(root: Path, command: str) -> None:
    result = shell(root, command)
    assert result.endswith("(exit 0)"), result
    assert "touch ran-check" in result
    assert nothing_ran(root)


LS_REFUSED = [
    ("ls -a", "hidden"),
    ("ls -la", "hidden"),
    ("ls -A src", "hidden"),
    ("ls --all", "hidden"),
    ("ls --alm", "hidden"),
    ("ls -f", "hidden"),
    ("ls --color=always", "escape sequences"),
    ("ls --color", "escape sequences"),
    ("ls --colo=always", "escape sequences"),
    ("ls --hyperlink", "escape sequences"),
    ("ls -LR", "symbolic links"),
    ("ls -H outlink", "symbolic links"),
    ("ls --dereference", "symbolic links"),
    ("ls -N", "control characters"),
    ("ls --show-control-chars", "control characters"),
    ("ls --quoting-style=literal", "control characters"),
    ("ls -Z", "is not an option run_shell allows for ls"),
    ("ls --sort=evil", "is not a value"),
    ("ls -w abc", "is not a value"),
    ("ls /", "outside the workspace"),
    ("ls /etc", "outside the workspace"),
    ("ls ..", "outside the workspace"),
    ("ls outlink", "outside the workspace"),
    ("ls ~/.ssh", "hidden"),
    ("ls --hide=x ../", "outside the workspace"),
]


@pytest.mark.parametrize(("command", "why"), LS_REFUSED)
def test_unsafe_ls_forms_are_refused(root: Path, command: str, why: str) -> None:
    result = shell(root, command)
    assert result.startswith("refused"), result
    assert why in result


@pytest.mark.parametrize(
    "command",
    ["ls", "ls -l", "ls -1 src sub", "ls -R", "ls -lh", "ls --sort=size", "ls -w 80", "ls -d src"],
)
def test_allowed_ls_forms_run(root: Path, command: str) -> None:
    assert shell(root, command).endswith("(exit 0)")


def test_ls_output_carries_no_control_characters(root: Path) -> None:
    (root / "red\x1b[31mname").write_text("x")
    result = shell(root, "ls")
    assert "\x1b" not in result
    assert "red?[31mname" in result


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("cat -x README.md", "is not an option run_shell allows for cat"),
        ("cat --frobnicate README.md", "is not an option"),
        ("cat /etc/passwd", "outside the workspace"),
        ("cat -n .env", "hidden"),
        ("cat --number=3 README.md", "takes no value"),
        ("pwd ../x", "pwd takes no arguments"),
        ("pwd /", "pwd takes no arguments"),
        ("pwd --frobnicate", "is not an option run_shell allows for pwd"),
    ],
)
def test_unsafe_cat_and_pwd_forms_are_refused(root: Path, command: str, why: str) -> None:
    result = shell(root, command)
    assert result.startswith("refused"), result
    assert why in result


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat -n README.md", "     1\t# Demo\n(exit 0)"),
        ("cat -A README.md", "# Demo$\n(exit 0)"),
        ("pwd -P", None),
        ("pwd --logical", None),
    ],
)
def test_allowed_cat_and_pwd_forms_run(root: Path, command: str, expected: str | None) -> None:
    result = shell(root, command)
    assert result == (expected or f"{root}\n(exit 0)")


SHELL_SYNTAX = [
    "ls; curl x",
    "ls && rm -rf ~",
    "ls | sh",
    "ls $(id)",
    "ls `id`",
    "ls > .bashrc",
    "ls${IFS}..",
    "ls ${IFS}..",
    "make check;id",
    "ls " + " ".join(["src;", "id"] * 30),
    "cat 'README.md\x1b[2J'",
    "cat 'README.md\x00'",
]


@pytest.mark.parametrize("command", SHELL_SYNTAX)
def test_shell_syntax_is_refused_and_no_second_program_runs(root: Path, command: str) -> None:
    result = shell(root, command)
    assert result.startswith("refused"), result
    assert nothing_ran(root)
    assert not (root / ".bashrc").exists()


@pytest.mark.parametrize("command", ["ls\nid", "ls\rid", "ls\tid"])
def test_line_breaks_only_separate_words(root: Path, command: str) -> None:
    """`ls\\nid` is `ls id`: id is a file name that does not exist, never a program."""
    result = shell(root, command)
    assert "uid=" not in result
    assert result.endswith("(exit 2)")


def _spellings(table: Syntax, option: Option, cluster_with: str) -> list[str]:
    """Every way to write a refused option: -x, -Kx (clustered), --long, --long=v, --lon."""
    forms = []
    if option.short:
        forms += [f"-{option.short}", f"-{cluster_with}{option.short}"]
    for name in option.long:
        forms += [f"--{name}", f"--{name}=v"]
        if table.abbreviations and len(name) > 4:
            forms.append(f"--{name[:-1]}")
    return forms


def _refused_table_rows() -> list[tuple[str, str, str]]:
    rows = []
    for program, table, flag in (("make", MAKE, "k"), ("ls", LS, "l"), ("cat", CAT, "n")):
        for option in table.options:
            if option.refused:
                rows += [
                    (program, form, option.refused) for form in _spellings(table, option, flag)
                ]
    return rows


@pytest.mark.parametrize(("program", "form", "why"), _refused_table_rows())
def test_every_refused_option_in_the_tables_is_refused_in_every_spelling(
    root: Path, program: str, form: str, why: str
) -> None:
    result = shell(root, f"{program} {form} x")
    assert result.startswith(f"refused: {program} option"), result
    assert why in result
    assert nothing_ran(root)
