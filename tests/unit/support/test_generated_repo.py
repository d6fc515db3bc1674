"""The generated repository says the truth: each language's own tags query finds what it records.

Every file parses without error in its grammar; every recorded definition is the only
one of its name, at its recorded line; every recorded reference is seen by the stock
`TAGS_QUERY` of the calling file's language (TypeScript: JavaScript's, then its own);
the ignore rules cover exactly the files it calls ignored (checked with pathspec's
gitignore rules, not the generator's own).
"""

from __future__ import annotations

import importlib
from collections import defaultdict
from functools import cache
from pathlib import Path

import pathspec
import pytest
from tree_sitter import Language, Parser, Query, QueryCursor

from tests.support.generated_repo import ALL, NESTED_GITIGNORE, GeneratedRepo, generate_repo

FILES = 64  # eight of each language, in every kind of folder


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> GeneratedRepo:
    return generate_repo(tmp_path_factory.mktemp("generated"), FILES, body_lines=12)


@cache
def _grammar(language: str) -> tuple[Language, Query]:
    if language == "typescript":
        module = importlib.import_module("tree_sitter_typescript")
        grammar = Language(module.language_typescript())
        javascript = importlib.import_module("tree_sitter_javascript")
        return grammar, Query(grammar, javascript.TAGS_QUERY + "\n" + module.TAGS_QUERY)
    else:
        module = importlib.import_module(f"tree_sitter_{language}")
        grammar = Language(module.language())
    return grammar, Query(grammar, module.TAGS_QUERY)


def _tags(
    repo: GeneratedRepo, paths: list[str]
) -> tuple[dict[str, set[tuple[str, int]]], dict[str, set[str]]]:
    """What the stock queries see: definitions {name: {(path, line)}}, references {name: {path}}."""
    definitions: dict[str, set[tuple[str, int]]] = defaultdict(set)
    references: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        grammar, query = _grammar(repo.language_of.get(path) or _language_by_extension(path))
        tree = Parser(grammar).parse((repo.root / path).read_bytes())
        assert not tree.root_node.has_error, f"{path} does not parse"
        for _, captures in QueryCursor(query).matches(tree.root_node):
            kinds = [kind for kind in captures if kind.startswith(("definition.", "reference."))]
            for node in captures.get("name", []):
                name = (node.text or b"").decode()
                for kind in kinds:
                    if kind.startswith("definition."):
                        definitions[name].add((path, node.start_point.row + 1))
                    else:
                        references[name].add(path)
    return definitions, references


def _language_by_extension(path: str) -> str:
    extension = path.rsplit(".", 1)[-1]
    return {"py": "python", "js": "javascript", "ts": "typescript", "go": "go",
            "rs": "rust", "c": "c", "java": "java", "rb": "ruby"}[extension]  # fmt: skip


def test_every_language_is_there_in_nested_folders(repo: GeneratedRepo) -> None:
    assert sorted(set(repo.language_of.values())) == sorted(ALL)
    assert any(path.count("/") >= 3 for path in repo.files)
    assert "pkg_02/generated" in {path.rsplit("/", 1)[0] for path in repo.files}
    assert sorted(repo.files) == repo.files


def test_each_recorded_definition_is_the_only_one_of_its_name_at_its_line(
    repo: GeneratedRepo,
) -> None:
    definitions, _ = _tags(repo, repo.files)
    for name, place in repo.definitions.items():
        assert definitions[name] == {place}, name
    per_file = defaultdict(int)
    for path, _ in repo.definitions.values():
        per_file[path] += 1
    assert set(per_file) == set(repo.files)
    assert min(per_file.values()) >= 4  # a class and at least three functions


def test_each_recorded_reference_is_seen_by_the_stock_tags_query(repo: GeneratedRepo) -> None:
    _, references = _tags(repo, repo.files)
    assert repo.references
    for name, paths in repo.references.items():
        assert name in repo.definitions
        assert paths <= references[name], name
    for name, paths in repo.untagged.items():  # C's calls, Rust's constructions: unseen
        for path in paths:
            assert name in (repo.root / path).read_text(), (name, path)


def test_the_popular_names_are_called_from_many_files(repo: GeneratedRepo) -> None:
    assert repo.popular
    for name in repo.popular:
        callers = repo.references.get(name, set()) | repo.untagged.get(name, set())
        assert len(callers) >= FILES // (2 * len(repo.popular)), name


def test_the_ignore_rules_cover_exactly_the_ignored_files(repo: GeneratedRepo) -> None:
    root_rules = pathspec.GitIgnoreSpec.from_lines(
        (repo.root / ".gitignore").read_text().splitlines()
    )
    nested = (repo.root / NESTED_GITIGNORE).read_text().splitlines()
    nested_rules = pathspec.GitIgnoreSpec.from_lines(nested)

    def ignored(path: str) -> bool:
        below = path.removeprefix("pkg_01/")
        return root_rules.match_file(path) or (below != path and nested_rules.match_file(below))

    on_disk = sorted(
        str(path.relative_to(repo.root)) for path in repo.root.rglob("*.*") if path.is_file()
    )
    sources = [path for path in on_disk if not path.endswith((".md", ".gitignore"))]
    assert sorted(path for path in sources if ignored(path)) == sorted(repo.ignored)
    assert [path for path in sources if not ignored(path)] == repo.files
    assert len(repo.ignored) >= 3


def test_ignored_files_define_names_of_their_own_and_call_the_popular_ones(
    repo: GeneratedRepo,
) -> None:
    definitions, references = _tags(repo, repo.ignored)
    assert set(repo.ignored_names) <= definitions.keys()
    assert not set(repo.ignored_names) & repo.definitions.keys()
    called = {name for name in repo.popular if references[name] & set(repo.ignored)}
    assert called, "an index that reads ignored files must show extra references"


def test_the_same_seed_gives_the_same_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    first = generate_repo(tmp_path / "a", 16, seed=3, body_lines=4)
    second = generate_repo(tmp_path / "b", 16, seed=3, body_lines=4)
    third = generate_repo(tmp_path / "c", 16, seed=4, body_lines=4)
    texts = [
        [(repo.root / path).read_bytes() for path in repo.files] for repo in (first, second, third)
    ]
    assert texts[0] == texts[1]
    assert texts[0] != texts[2]
    assert first.definitions == second.definitions


def test_files_average_about_ten_kilobytes_by_default(tmp_path: Path) -> None:
    repo = generate_repo(tmp_path, 16)
    sizes = [(tmp_path / path).stat().st_size for path in repo.files]
    assert 7_000 < sum(sizes) / len(sizes) < 14_000


def test_a_single_language_and_a_single_file_work(tmp_path: Path) -> None:
    repo = generate_repo(tmp_path, 1, languages=("go",), body_lines=2)
    assert repo.files == ["pkg_00/m00000.go"]
    assert repo.popular == ["p00000_" + repo.popular[0].split("_", 1)[1]]
    with pytest.raises(ValueError, match="languages must be some of"):
        generate_repo(tmp_path / "x", 1, languages=("cobol",))
