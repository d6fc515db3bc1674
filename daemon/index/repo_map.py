"""The repo map: the most relevant definitions of the workspace, fitted to a budget.

Files are scored by their global rank plus a rank personalised on the files and
names the conversation mentions (`rank.py`); each definition by its file's score,
how many files use its name, and whether the conversation names it. The best
definitions are shown grouped by file, in the order of each file's best one, as
`path:` then `  LINE: signature` lines; as many as fit in the budget (tokens
estimated as characters / 4, as everywhere else). A partial index (over its
memory budget) says so on the line after the header. What the conversation
mentions is found by matching its words against the index's paths and defined
names, in one linear pass each: the conversation is the user's and the
repository's text (a tool result), and a pattern that backtracks would take
seconds on a long run of path characters without a dot.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from coding_harness.daemon.index.code_index import CodeIndex
from coding_harness.daemon.index.rank import personalised

CHARS_PER_TOKEN = 4
CANDIDATE_FILES = 300  # the best files whose definitions compete for the map
MENTION_BOOST = 10.0
SCAN_CHARS = 200_000  # of the conversation, newest first, looked at for mentions
_MIN_LINE_CHARS = 6  # no map line is shorter: a budget holds at most budget / 6 of them
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,80}")
_PATH_CHARS = re.compile(r"[\w.\-/]+")  # a run of them is matched whole against the paths
MAX_PATH_CHARS = 1_024  # as the walk: a longer run is no indexed path

HEADER = "The workspace's most relevant definitions (path, then line: signature):"


@dataclass(frozen=True, slots=True)
class Mentions:
    files: frozenset[str]
    names: frozenset[str]


def mentions(index: CodeIndex, texts: Iterable[str]) -> Mentions:
    """The indexed paths and defined names found in `texts` (newest first)."""
    kept: list[str] = []
    size = 0
    for text in texts:
        kept.append(text[: SCAN_CHARS - size])
        size += len(kept[-1])
        if size >= SCAN_CHARS:
            break
    joined = "\n".join(kept)
    with index.data_lock:
        names = {word for word in set(_WORD.findall(joined)) if word in index.defined}
        files = set()
        for run in set(_PATH_CHARS.findall(joined)):
            path = run.rstrip(".").removeprefix("./")  # `see app.py.` names app.py
            if len(path) <= MAX_PATH_CHARS and path in index.files:
                files.add(path)
    return Mentions(files=frozenset(files), names=frozenset(names))


def repo_map(index: CodeIndex, budget_tokens: int, mentioned: Mentions | None = None) -> str:
    """The map within `budget_tokens`; empty when nothing fits or nothing is indexed."""
    if budget_tokens <= 0:
        return ""
    budget = budget_tokens * CHARS_PER_TOKEN
    notice = index.notice()
    header = HEADER if notice is None else f"{HEADER}\n({notice})"
    with index.data_lock:
        nothing = Mentions(frozenset(), frozenset())
        lines = _ranked_lines(index, mentioned or nothing, budget // _MIN_LINE_CHARS)
    return _fit(lines, budget, header)


def _ranked_lines(index: CodeIndex, mentioned: Mentions, most: int) -> list[tuple[str, str]]:
    """(path, line) pairs of the `most` best definitions, best first."""
    ranks = index.ranks
    if not ranks.paths:
        return []
    seeds: dict[int, float] = {}
    for path in mentioned.files:
        if (at := ranks.position.get(path)) is not None:
            seeds[at] = seeds.get(at, 0.0) + 1.0
    for name in mentioned.names:
        definers = index.defined.get(name, ())
        for path in definers:
            if (at := ranks.position.get(path)) is not None:
                seeds[at] = seeds.get(at, 0.0) + 1.0 / len(definers)
    local = personalised(ranks, seeds)
    top_base = max(ranks.base) or 1.0
    top_local = max(local.values(), default=0.0) or 1.0
    scores = {at: base / top_base for at, base in enumerate(ranks.base)}
    for at, value in local.items():
        scores[at] += 5.0 * value / top_local
    for path in mentioned.files:
        if (at := ranks.position.get(path)) is not None:
            scores[at] += 100.0  # a file the conversation names comes first
    best = [ranks.paths[at] for at in sorted(scores, key=lambda at: -scores[at])]
    best = best[:CANDIDATE_FILES]
    # Files the last ranking has not seen yet (added since) still come when named.
    best += [path for path in sorted(mentioned.files) if path not in ranks.position]
    score_of = {ranks.paths[at]: value for at, value in scores.items()}
    scored: list[tuple[float, str, int, str]] = []
    for path in best:
        entry = index.files.get(path)  # None: removed since the last ranking
        if entry is None:
            continue
        file_score = score_of.get(path, 100.0)
        for definition in entry.tags.definitions:
            name = definition.name
            spread = max(1, len(index.defined.get(name, ())))
            used = math.log1p(index.used_by.get(name, 0)) / spread
            weight = file_score * (1.0 + used)
            if name in mentioned.names:
                weight *= MENTION_BOOST
            scored.append((-weight, path, definition.line, definition.signature))
    best_first = heapq.nsmallest(most, scored)
    return [(path, f"{line}: {signature}") for _, path, line, signature in best_first]


def _fit(lines: list[tuple[str, str]], budget_chars: int, header: str = HEADER) -> str:
    """The longest best-first prefix of `lines` whose rendering fits the budget."""
    low, high = 0, len(lines)
    while low < high:  # the largest count that fits
        middle = (low + high + 1) // 2
        if len(_render(lines[:middle], header)) <= budget_chars:
            low = middle
        else:
            high = middle - 1
    return _render(lines[:low], header) if low else ""


def _render(lines: list[tuple[str, str]], header: str = HEADER) -> str:
    by_file: dict[str, list[str]] = {}
    for path, line in lines:
        by_file.setdefault(path, []).append(line)
    out = [header]
    for path, entries in by_file.items():
        out.append(f"{path}:")
        out.extend(f"  {entry}" for entry in sorted(entries, key=_line_number))
    return "\n".join(out) + "\n"


def _line_number(entry: str) -> int:
    return int(entry.partition(":")[0])
