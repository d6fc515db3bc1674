"""A generated repository of eight languages, and the record of what an index must find.

`generate_repo(root, files)` writes `files` source files spread round-robin over
python, javascript, typescript, go, rust, c, java and ruby, in nested folders
(pkg_NN/, pkg_NN/sub_N/, pkg_NN/sub_3/inner/). Each file defines one class (struct,
type) and a few top-level functions (Java: static methods of its class), all named
uniquely across the repository from the file's number (`P00042Batch`,
`p00042_parse_row`), with bodies of loops, conditionals and strings (`body_lines`
per function; the default gives about 10 KB a file). Each file calls functions of
a few other files, one of them always a "popular" name (the first function of the
first few files, so they rank high), and builds one other file's class.

Ignored, and so never to be indexed: a nested `pkg_01/.gitignore` ignores
`generated/` and `*.min.js` below pkg_01 (while `pkg_02/generated/` holds ordinary
files: the rule is pkg_01's alone), and the root `.gitignore` ignores `/build/`.
Ignored files define `g...` names and call the popular names, so an index that
reads them shows extra definitions and references.

`GeneratedRepo` holds paths relative to the root, POSIX style. `references` lists
what each language's stock tags query sees (TypeScript's: JavaScript's and its
own); uses that query misses (C's query has no references, Rust's no
`Type::default()`) are in `untagged` instead. The generation is deterministic for a seed.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.generated_sources import SYNTAXES, FilePlan, render

ALL: tuple[str, ...] = ("python", "javascript", "typescript", "go", "rust", "c", "java", "ruby")
NESTED_GITIGNORE = "pkg_01/.gitignore"
_VERBS = ("parse", "render", "merge", "score", "load", "check", "apply", "build", "split")
_NOUNS = ("row", "batch", "token", "frame", "entry", "ledger", "route", "query", "patch")


@dataclass(kw_only=True, slots=True)
class GeneratedRepo:
    root: Path
    files: list[str]  # every file an index must read, sorted
    definitions: dict[str, tuple[str, int]]  # name -> (path, 1-based line)
    references: dict[str, set[str]]  # name -> files whose stock tags query sees a use
    untagged: dict[str, set[str]]  # name -> files that use it where that query is blind
    popular: list[str]  # functions called from many files
    ignored: list[str]  # files an index must not read
    ignored_names: list[str]  # names defined only in ignored files
    language_of: dict[str, str] = field(default_factory=dict)  # path -> language


def generate_repo(
    root: Path,
    files: int,
    *,
    seed: int = 0,
    languages: tuple[str, ...] = ALL,
    body_lines: int = 72,
) -> GeneratedRepo:
    """Write the repository under `root` (created if missing) and say what it holds."""
    unknown = set(languages) - SYNTAXES.keys()
    if unknown or not languages:
        raise ValueError(f"languages must be some of {ALL}, not {sorted(unknown) or '()'}")
    rng = random.Random(seed)
    plans = [_plan(number, languages, files, rng, body_lines) for number in range(files)]
    popular = [plan.functions[0] for plan in plans[: max(1, min(6, files // 10))]]
    repo = GeneratedRepo(
        root=root, files=[], definitions={}, references=defaultdict(set),
        untagged=defaultdict(set), popular=popular, ignored=[], ignored_names=[],
    )  # fmt: skip
    for number, plan in enumerate(plans):
        _choose_calls(plan, number, plans, popular, rng)
        path = _write(root, plan, _file_name(plan, number, "m"), repo)
        repo.files.append(path)
        _record_uses(repo, plan, path)
    _write_ignored(root, repo, languages, popular, rng, body_lines)
    repo.files.sort()
    repo.references = dict(repo.references)
    repo.untagged = dict(repo.untagged)
    return repo


def _plan(
    number: int, languages: tuple[str, ...], files: int, rng: random.Random, body_lines: int
) -> FilePlan:
    prefix = f"p{number:05d}"
    verbs = rng.sample(_VERBS, rng.randint(3, 5))
    return FilePlan(
        language=languages[number % len(languages)],
        folder=_folder(number, packages=max(3, min(16, files // 32))),
        class_name=f"P{number:05d}{rng.choice(_NOUNS).capitalize()}",
        functions=[f"{prefix}_{verb}_{rng.choice(_NOUNS)}" for verb in verbs],
        calls=[[] for _ in verbs],
        constructs=None,
        body_lines=body_lines,
        seed=rng.randrange(2**32),
    )


def _folder(number: int, *, packages: int) -> str:
    package = f"pkg_{number % packages:02d}"
    sub = (number // packages) % 4
    if sub == 0:
        return package
    if package == "pkg_02" and sub == 1:
        return f"{package}/generated"  # ignored only below pkg_01
    return f"{package}/sub_{sub}" + ("/inner" if sub == 3 else "")


def _file_name(plan: FilePlan, number: int, prefix: str) -> str:
    extension = SYNTAXES[plan.language].extension
    stem = plan.class_name if plan.language == "java" else f"{prefix}{number:05d}"
    return f"{plan.folder}/{stem}.{extension}" if plan.folder else f"{stem}.{extension}"


def _choose_calls(
    plan: FilePlan, number: int, plans: list[FilePlan], popular: list[str], rng: random.Random
) -> None:
    """One popular function (not its own), two functions and one class of other files."""
    others = [name for name in popular if name not in plan.functions]
    callees = [rng.choice(others)] if others else []
    if len(plans) > 1:
        for _ in range(2):
            other = plans[(number + rng.randrange(1, len(plans))) % len(plans)]
            callees.append(rng.choice(other.functions))
        plan.constructs = plans[(number + rng.randrange(1, len(plans))) % len(plans)].class_name
    for index, callee in enumerate(callees):
        plan.calls[index % len(plan.calls)].append(callee)


def _write(root: Path, plan: FilePlan, relative: str, repo: GeneratedRepo) -> str:
    text, lines = render(plan)
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    repo.language_of[relative] = plan.language
    for name, line in lines.items():
        repo.definitions[name] = (relative, line)
    return relative


def _record_uses(repo: GeneratedRepo, plan: FilePlan, path: str) -> None:
    syntax = SYNTAXES[plan.language]
    for callee in (name for calls in plan.calls for name in calls):
        (repo.references if syntax.tags_calls else repo.untagged)[callee].add(path)
    if plan.constructs is not None:
        seen = repo.references if syntax.tags_constructs else repo.untagged
        seen[plan.constructs].add(path)


def _write_ignored(
    root: Path,
    repo: GeneratedRepo,
    languages: tuple[str, ...],
    popular: list[str],
    rng: random.Random,
    body_lines: int,
) -> None:
    """Files under ignore rules: nested pkg_01/.gitignore and the root one."""
    (root / "pkg_01").mkdir(parents=True, exist_ok=True)
    (root / NESTED_GITIGNORE).write_text("# the code generator's output\ngenerated/\n*.min.js\n")
    (root / ".gitignore").write_text("/build/\n*.log\n")
    (root / "README.md").write_text("# Generated repository\n\nRows, in eight languages.\n")
    places = ["pkg_01/generated", "pkg_01/sub_1/generated", "build", "pkg_01/sub_2"]
    for number, folder in enumerate(places):
        language = "javascript" if folder == "pkg_01/sub_2" else languages[number % len(languages)]
        plan = FilePlan(
            language=language, folder=folder, class_name=f"G{number:05d}Output",
            functions=[f"g{number:05d}_emit_row", f"g{number:05d}_emit_table"],
            calls=[[rng.choice(popular)], []], constructs=None, body_lines=body_lines,
            seed=rng.randrange(2**32),
        )  # fmt: skip
        relative = _file_name(plan, number, "g")
        if folder == "pkg_01/sub_2":
            relative = f"{folder}/bundle.min.js"
        text, _ = render(plan)
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
        repo.ignored.append(relative)
        repo.ignored_names.extend([plan.class_name, *plan.functions])
