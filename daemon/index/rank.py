"""How important each file is: PageRank over the graph of who uses whose names.

A file that uses a name gets an edge to every file that defines it. The edge is
weighted by how often the name is used (square root, so one chatty file does not
dominate), shared among the files that define the name (a name defined in many
places says little about any one of them), and made light for private-looking
names (a leading underscore) and very short ones. Names defined in more than
`MAX_DEFINERS` files are left out: `get`, `run`, `__init__` connect everything
and mean nothing.

The global rank is computed once per change (power iteration, started from the
previous ranks, so an update after one edit converges in a few rounds); after an
edit only the links of the edited file and of the files using a name it added or
removed are made again (`update_graph`).
`personalised` adds, at each turn, a rank seeded by the files and names of the
conversation, found by local push (Andersen, Chung and Lang's approximate
personalised PageRank): it only touches the seeds' neighbourhood, so it costs
little whatever the size of the repository.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from coding_harness.daemon.index.persist import StoredFile

DAMPING = 0.85
MAX_DEFINERS = 25
_ITERATIONS = 40
_TOLERANCE = 1e-7
_PUSH_EPSILON = 1e-4
_PUSH_BUDGET = 200_000  # pushes per personalised rank, whatever the graph

# name -> the paths defining it (`CodeIndex.defined`)
Definers = Mapping[str, tuple[str, ...]]


@dataclass(kw_only=True, slots=True)
class FileRanks:
    paths: list[str]
    position: dict[str, int]
    edges: list[list[tuple[int, float]]]  # per file: (target, share of its out-weight)
    base: list[float]  # global PageRank, summing to 1

    @classmethod
    def empty(cls) -> FileRanks:
        return cls(paths=[], position={}, edges=[], base=[])


def name_weight(name: str) -> float:
    if name.startswith("_"):
        return 0.1
    if len(name) < 3:
        return 0.2
    return 1.0


@dataclass(kw_only=True, slots=True)
class FileGraph:
    paths: list[str]
    position: dict[str, int]
    edges: list[list[tuple[int, float]]]


def file_graph(files: Mapping[str, StoredFile], defined: Definers) -> FileGraph:
    """The weighted graph of uses between `files` (see the module's docstring)."""
    paths = sorted(files)
    position = {path: i for i, path in enumerate(paths)}
    edges = [_out_edges(path, files[path], defined, position) for path in paths]
    return FileGraph(paths=paths, position=position, edges=edges)


def update_graph(
    previous: FileRanks,
    files: Mapping[str, StoredFile],
    defined: Definers,
    dirty: set[str],
) -> FileGraph:
    """`previous`'s graph with the links of the `dirty` files made again (the same files)."""
    edges = list(previous.edges)
    for path in dirty:
        at = previous.position.get(path)
        if at is not None and path in files:
            edges[at] = _out_edges(path, files[path], defined, previous.position)
    return FileGraph(paths=previous.paths, position=previous.position, edges=edges)


def rank_graph(graph: FileGraph, previous: FileRanks | None = None) -> FileRanks:
    """The graph's global ranks, iterated from `previous` ones where it has them."""
    start = None
    if previous is not None and previous.paths:
        start = [
            previous.base[j] if (j := previous.position.get(path)) is not None else 0.0
            for path in graph.paths
        ]
    base = _pagerank(graph.edges, start)
    return FileRanks(paths=graph.paths, position=graph.position, edges=graph.edges, base=base)


def rank_files(
    files: Mapping[str, StoredFile],
    defined: Definers,
    previous: FileRanks | None = None,
) -> FileRanks:
    return rank_graph(file_graph(files, defined), previous)


def _out_edges(
    path: str, entry: StoredFile, defined: Definers, position: Mapping[str, int]
) -> list[tuple[int, float]]:
    weights: dict[int, float] = {}
    for name, count in entry.tags.references.items():
        definers = defined.get(name)
        if not definers or len(definers) > MAX_DEFINERS:
            continue
        share = math.sqrt(count) * name_weight(name) / len(definers)
        for target in definers:
            if target != path:
                index = position[target]
                weights[index] = weights.get(index, 0.0) + share
    total = sum(weights.values())
    return [(target, weight / total) for target, weight in weights.items()] if total else []


def _pagerank(edges: list[list[tuple[int, float]]], start: list[float] | None) -> list[float]:
    count = len(edges)
    if count == 0:
        return []
    uniform = 1.0 / count
    ranks = _normalised(start) if start is not None and sum(start) > 0 else [uniform] * count
    for _ in range(_ITERATIONS):
        following = [0.0] * count
        dangling = 0.0
        for source, out in enumerate(edges):
            mass = ranks[source]
            if not out:
                dangling += mass
                continue
            for target, share in out:
                following[target] += mass * share
        spread = (1.0 - DAMPING) * uniform + DAMPING * dangling * uniform
        following = [DAMPING * value + spread for value in following]
        change = sum(abs(a - b) for a, b in zip(following, ranks, strict=True))
        ranks = following
        if change < _TOLERANCE:
            break
    return ranks


def _normalised(values: list[float]) -> list[float]:
    total = sum(values)
    return [value / total for value in values]


def personalised(ranks: FileRanks, seeds: Mapping[int, float]) -> dict[int, float]:
    """Approximate PageRank personalised on `seeds` (file position -> weight)."""
    total = sum(seeds.values())
    if total <= 0:
        return {}
    alpha = 1.0 - DAMPING
    estimate: dict[int, float] = {}
    residual = {node: weight / total for node, weight in seeds.items()}
    queue = list(residual)
    pushes = 0
    while queue and pushes < _PUSH_BUDGET:
        node = queue.pop()
        mass = residual.get(node, 0.0)
        out = ranks.edges[node]
        if mass < _PUSH_EPSILON * max(len(out), 1):
            continue
        pushes += 1
        estimate[node] = estimate.get(node, 0.0) + alpha * mass
        residual[node] = 0.0
        for target, share in out:
            before = residual.get(target, 0.0)
            after = before + (1.0 - alpha) * mass * share
            residual[target] = after
            threshold = _PUSH_EPSILON * max(len(ranks.edges[target]), 1)
            if before < threshold <= after:
                queue.append(target)
    return estimate
