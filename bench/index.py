"""What the code index costs: cold build, warm restart, one-file update, repo map, grep.

On a generated repository (`tests/support/generated_repo.py`: eight languages,
about 10 KB a file, nested folders and .gitignore files) of `--files` files; with
`--stdlib` on a copy of the Python standard library (without site-packages, which
some installs keep inside it); with `--tree PATH` on any tree in place, read only
(the index's SQLite file goes to a temporary folder, no file is changed, and the
bench checks that no folder of the tree changed). For each it prints:

- cold build: `CodeIndex.refresh` on an empty store, in a child process as the
  daemon runs it (the parse itself in the index's own worker processes); its wall
  time and peak memory: the building process's ru_maxrss, its largest parse
  worker's (RUSAGE_CHILDREN), and the whole process tree's summed RSS sampled
  every 20 ms with psutil;
- warm restart, in a fresh child: open the stored index and refresh with nothing
  changed (load, walk, rank), then the memory the warm index holds; a refresh with
  nothing changed (what each turn pays); one file changed then refreshed (not
  with --tree);
- the repo map at 1024 tokens, without and with a mention (a file and a name, as a
  conversation's), where a file mentioned alone comes in the map, and
  `find_symbol`'s two look-ups;
- `grep` (daemon/tools/code_search.py) for a rare name, a popular one and a common
  regex, with ripgrep and with the Python fallback (`use_ripgrep=False`);
- with --profile, where a file's parse goes, per language, in this process: reading,
  tree-sitter's parse, the tags query's matches, and the Python that keeps the tags.

Medians of `--runs` runs (3 with --quick, which also makes 1,000 files). Nothing
timed is asserted. Targets (issue 17): cold build under 30 s and 400 MB on 2 cores,
one-file update and map under 200 ms.

    .venv/bin/python bench/index.py [--files 10000] [--stdlib] [--tree PATH] [--quick]
                                    [--runs 5] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import itertools
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coding_harness.daemon.context.window import tokens
from coding_harness.daemon.index.code_index import CodeIndex
from coding_harness.daemon.index.persist import IndexFile
from coding_harness.daemon.index.repo_map import mentions, repo_map
from tests.support.generated_repo import generate_repo

MAP_TOKENS = 1024
MB = 1024 * 1024
MATCH_LINE = re.compile(r"^[^\n:]+:\d+:", re.MULTILINE)


def _ms(action: Callable[[], object], runs: int) -> list[float]:
    """Median wall and CPU milliseconds (this process's CPU: on a busy machine the wall
    time is the CPU time plus the wait for a core)."""
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return [statistics.median(walls), statistics.median(cpus)]


def _show(figure: list[float]) -> str:
    wall, cpu = figure
    return f"{wall:.1f} ms (CPU {cpu:.1f})"


def _rss_mb() -> float:
    return psutil.Process().memory_info().rss / MB


def _maxrss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: kilobytes


def _cpu_seconds(who: int) -> float:
    used = resource.getrusage(who)
    return used.ru_utime + used.ru_stime


# -- in the child process ------------------------------------------------------
def child_cold(root: Path, db: Path) -> dict[str, Any]:
    before = _rss_mb()
    index = CodeIndex(root, IndexFile(db, root))
    done = index.refresh()
    return {
        "files": done.files,
        "parsed": done.parsed,
        "seconds": done.seconds,
        "rss_before": before,
        "peak_self": _maxrss_mb(resource.RUSAGE_SELF),
        "peak_worker": _maxrss_mb(resource.RUSAGE_CHILDREN),
        "cpu": _cpu_seconds(resource.RUSAGE_SELF) + _cpu_seconds(resource.RUSAGE_CHILDREN),
        "db_mb": db.stat().st_size / MB if db.exists() else 0.0,
    }


def _one_change(index: CodeIndex, path: Path, runs: int) -> dict[str, Any]:
    """One file changed, then a refresh: whole, and split as the daemon may split it
    (`refresh(rank=False)` for the turn, `rerank()` after) when the index can."""
    original = path.read_bytes()

    def edit(**options: bool) -> None:
        path.write_bytes(path.read_bytes() + b"\n")
        index.refresh(**options)

    figures = {"one_changed_ms": _ms(edit, runs)}
    if "rank" in inspect.signature(index.refresh).parameters:
        figures["unranked_ms"] = _ms(lambda: edit(rank=False), runs)
        reranks = []
        for _ in range(runs):
            edit(rank=False)
            reranks.append(_ms(index.rerank, 1))
        figures["rerank_ms"] = [statistics.median(r[at] for r in reranks) for at in (0, 1)]
    path.write_bytes(original)
    index.refresh()
    return figures


def child_warm(root: Path, db: Path, change: str, mention: str, runs: int) -> dict[str, Any]:
    before = _rss_mb()
    index = CodeIndex(root, IndexFile(db, root))
    start = time.perf_counter()
    opened = index.refresh()
    figures: dict[str, Any] = {
        "open_ms": (time.perf_counter() - start) * 1000,
        "open_parsed": opened.parsed,
        "held_mb": _rss_mb() - before,
        "unchanged_ms": _ms(index.refresh, runs),
    }
    if change:
        figures.update(_one_change(index, root / change, runs))
    plain = repo_map(index, MAP_TOKENS)
    figures["map_ms"] = _ms(lambda: repo_map(index, MAP_TOKENS), runs)
    figures["map_tokens"] = tokens(len(plain))
    figures["mentions_ms"] = _ms(lambda: mentions(index, [mention]), runs)
    seen = mentions(index, [mention])
    figures["map_mentioned_ms"] = _ms(lambda: repo_map(index, MAP_TOKENS, seen), runs)
    wanted = sorted(seen.files)[0] if seen.files else ""
    only_file = repo_map(index, MAP_TOKENS, mentions(index, [wanted]))
    shown = [line[:-1] for line in only_file.splitlines() if line[:-1] in index.files]
    figures["mentioned_file_at"] = shown.index(wanted) + 1 if wanted in shown else 0
    if not wanted:
        figures["mentioned_file_at"] = "(none mentioned)"
    name = sorted(seen.names)[0] if seen.names else ""
    figures["symbol_ms"] = _ms(lambda: (index.definitions(name), index.referencing(name)), runs)
    figures["peak_self"] = _maxrss_mb(resource.RUSAGE_SELF)
    return figures


# -- in the bench's own process ------------------------------------------------
def run_child(argv: list[str]) -> tuple[dict[str, Any], float]:
    """The child's JSON answer, and the peak summed RSS of its process tree."""
    command = [sys.executable, __file__, "--child", *argv]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    watched = psutil.Process(child.pid)
    peak = 0.0
    while child.poll() is None:
        try:
            tree = [watched, *watched.children(recursive=True)]
            peak = max(peak, sum(_rss_of(process) for process in tree))
        except psutil.NoSuchProcess:
            pass
        time.sleep(0.02)
    output = child.stdout.read() if child.stdout else ""
    if child.returncode != 0:
        raise SystemExit(f"the bench's child failed ({child.returncode}): {' '.join(command)}")
    return json.loads(output.strip().splitlines()[-1]), peak


def _rss_of(process: psutil.Process) -> float:
    try:
        return float(process.memory_info().rss) / MB
    except psutil.NoSuchProcess:
        return 0.0


def grep_figures(root: Path, patterns: list[str], runs: int) -> list[str]:
    from coding_harness.daemon.tools.code_search import grep
    from coding_harness.daemon.tools.workspace import Workspace

    workspace = Workspace(root)
    has_fallback = "use_ripgrep" in inspect.signature(grep).parameters
    lines = []
    for pattern in patterns:
        ways: dict[str, dict[str, Any]] = {"ripgrep": {}}
        if has_fallback:
            ways = {"ripgrep": {"use_ripgrep": True}, "Python fallback": {"use_ripgrep": False}}
        answers = {}
        for way, options in ways.items():
            took = []
            for _ in range(runs):
                start = time.perf_counter()
                answers[way] = asyncio.run(grep(workspace, pattern, ".", 60.0, **options))
                took.append((time.perf_counter() - start) * 1000)
            found = len(MATCH_LINE.findall(answers[way]))
            lines.append(
                f"  grep {pattern!r}, {way}: {statistics.median(took):.0f} ms ({found} matches)"
            )
        if not has_fallback:
            lines.append(
                "  (code_search.grep has no use_ripgrep: the Python fallback not measured)"
            )
    return lines


def measure(root: Path, label: str, change: str, mention: str, runs: int) -> None:
    db = Path(tempfile.mkdtemp(prefix="chi-")) / "index.sqlite"
    try:
        cold, tree_peak = run_child(["cold", str(root), str(db)])
        warm, _ = run_child(["warm", str(root), str(db), change, mention, str(runs)])
    finally:
        shutil.rmtree(db.parent, ignore_errors=True)
    print(f"{label}: {cold['files']} files indexed")
    print(
        f"  cold build: {cold['seconds']:.1f} s, {cold['cpu']:.1f} s of CPU (with the parse "
        f"workers'); peak memory: building process "
        f"{cold['peak_self']:.0f} MB (of which {cold['rss_before']:.0f} MB before the build), "
        f"largest parse worker {cold['peak_worker']:.0f} MB, whole tree {tree_peak:.0f} MB "
        f"(sampled); store {cold['db_mb']:.1f} MB"
    )
    print(
        f"  warm restart: {warm['open_ms']:.0f} ms ({warm['open_parsed']} parsed), "
        f"index held {warm['held_mb']:.0f} MB, process peak {warm['peak_self']:.0f} MB; "
        f"refresh with nothing changed {_show(warm['unchanged_ms'])}"
    )
    if change:
        print(f"  one file changed ({change}), refreshed: {_show(warm['one_changed_ms'])}")
    if "unranked_ms" in warm:
        print(
            f"    refresh(rank=False) {_show(warm['unranked_ms'])}, "
            f"then rerank() {_show(warm['rerank_ms'])}"
        )
    print(
        f"  repo map at {MAP_TOKENS} tokens: {_show(warm['map_ms'])}, {warm['map_tokens']} "
        f"tokens; with a mention {_show(warm['map_mentioned_ms'])} + finding mentions "
        f"{_show(warm['mentions_ms'])}; a file mentioned alone is number "
        f"{warm['mentioned_file_at']} of the map's files (0: not shown)"
    )
    print(f"  find_symbol look-ups: {_show(warm['symbol_ms'])}")


def profile_parse(root: Path, paths: list[str]) -> list[str]:
    """Milliseconds a file, per language: read, parse, query matches, the rest of file_tags."""
    from tree_sitter import QueryCursor

    from coding_harness.daemon.index.languages import grammar, language_of
    from coding_harness.daemon.index.tags import file_tags

    spent: dict[str, list[float]] = {}
    for path in paths:
        language = language_of(path) or ""
        tools = grammar(language)
        marks = [time.perf_counter()]
        data = (root / path).read_bytes()
        marks.append(time.perf_counter())
        tree = tools.parser().parse(data)
        marks.append(time.perf_counter())
        for _ in QueryCursor(tools.query).matches(tree.root_node):
            pass
        marks.append(time.perf_counter())
        file_tags(data, tools)
        marks.append(time.perf_counter())
        read, parse, query, whole = (b - a for a, b in itertools.pairwise(marks))
        row = [read, parse, query, whole - parse - query, read + whole]
        total = spent.setdefault(language, [0.0] * 6)
        for at, value in enumerate(row):
            total[at] += value * 1000
        total[5] += 1
    lines = ["  parse profile, ms a file: read, parse, query, rest of file_tags = total"]
    for language, (read, parse, query, rest, whole, count) in sorted(spent.items()):
        lines.append(
            f"    {language:11s} {read / count:4.1f} {parse / count:5.1f} {query / count:5.1f} "
            f"{rest / count:5.1f} = {whole / count:5.1f}"
        )
    return lines


def _folder_times(root: Path) -> dict[str, int]:
    return {folder: Path(folder).stat().st_mtime_ns for folder, _, _ in os.walk(root)}


def bench_generated(files: int, runs: int, profile: bool) -> None:
    root = Path(tempfile.mkdtemp(prefix="chg-"))
    try:
        start = time.perf_counter()
        repo = generate_repo(root, files)
        size = sum((root / path).stat().st_size for path in repo.files) / 1e6
        print(f"generated {files} files, {size:.1f} MB, in {time.perf_counter() - start:.1f} s")
        changed = repo.files[len(repo.files) // 2]
        name = repo.popular[0]
        measure(root, "generated", changed, f"look at {changed} and {name}", runs)
        rare = next(name for name, (path, _) in repo.definitions.items() if path == changed)
        patterns = [rare, name, r"total \+= p\d{5}_parse_\w+\("]
        for line in grep_figures(root, patterns, runs):
            print(line)
        if profile:
            sample = repo.files[:: max(1, len(repo.files) // 800)]
            profile_parse(root, sample[:16])  # grammars loaded
            print("\n".join(profile_parse(root, sample)))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def bench_stdlib(runs: int) -> None:
    """The standard library without site-packages, copied (so one file can change)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    root = Path(tempfile.mkdtemp(prefix="chs-")) / "lib"
    try:
        skip = shutil.ignore_patterns("site-packages", "__pycache__")
        shutil.copytree(stdlib, root, ignore=skip, symlinks=True)
        changed = "json/decoder.py"
        measure(root, f"stdlib ({stdlib}, copied)", changed, f"see {changed} and urlsplit", runs)
        for line in grep_figures(root, ["def urlsplit", r"self\.\w+ = None$"], runs):
            print(line)
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


def bench_tree(tree: Path, runs: int) -> None:
    """Any tree, in place and read only: no file changed, and a check that none did."""
    before = _folder_times(tree)
    measure(tree, f"{tree} (in place)", "", "", runs)
    for line in grep_figures(tree, ["def main", r"self\.\w+ = None$"], runs):
        print(line)
    print(f"  tree left untouched: {_folder_times(tree) == before}")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        step, root, db, *rest = sys.argv[2:]
        if step == "cold":
            answer = child_cold(Path(root), Path(db))
        else:
            answer = child_warm(Path(root), Path(db), rest[0], rest[1], int(rest[2]))
        print(json.dumps(answer))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, help="generated files; 0: none")
    parser.add_argument("--stdlib", action="store_true")
    parser.add_argument("--tree", type=Path, help="also index this tree in place, read only")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args()
    files = options.files if options.files is not None else 1000 if options.quick else 10_000
    runs = options.runs or (3 if options.quick else 5)
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}")
    if files:
        bench_generated(files, runs, options.profile)
    if options.stdlib:
        bench_stdlib(runs)
    if options.tree:
        bench_tree(options.tree.resolve(), runs)


if __name__ == "__main__":
    main()
