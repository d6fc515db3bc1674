"""Which files the code index reads, and each language's grammar and tags query.

The grammars are the tree-sitter project's own wheels (one package per language,
the parser compiled in): nothing is downloaded at first use. Each package ships a
tags query naming definitions (`@definition.KIND`) and references
(`@reference.KIND`); where a language's query names no references (C, C++) or few
(Python: calls only), a few patterns of ours are added, so the reference graph
that ranks the repo map has edges in every language; Ruby's pattern that calls
every identifier a use is turned off. TypeScript's query covers
only what TypeScript adds, so JavaScript's query runs with it.

Grammars load on first use, in the thread or process that parses: a daemon that
never indexes never imports them.
"""

from __future__ import annotations

import importlib
import importlib.resources
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from tree_sitter import Language, Parser, Query

# File extension -> language name.
EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".java": "java",
    ".rb": "ruby",
}

# Patterns of ours, added to a package's tags query: references it does not name.
_EXTRA_REFERENCES: dict[str, str] = {
    "python": """
(class_definition superclasses: (argument_list (identifier) @name)) @reference.class
(type (identifier) @name) @reference.type
(decorator (identifier) @name) @reference.call
""",
    "c": """
(call_expression function: (identifier) @name) @reference.call
(type_identifier) @name @reference.type
""",
    "ruby": """
(constant) @name @reference.class
""",
    "cpp": """
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(type_identifier) @name @reference.type
""",
}


# A pattern of Ruby's query that takes every identifier for a call, unless it is a
# local (a check tree-sitter's Python binding does not make): most of the time of a
# Ruby file, and noise in the graph. Constants come back through the pattern above.
_EVERY_IDENTIFIER = "#is-not? local"


@dataclass(frozen=True, slots=True)
class Grammar:
    name: str
    language: Language
    query: Query

    def parser(self) -> Parser:
        return Parser(self.language)


def language_of(path: str) -> str | None:
    """The language of a workspace-relative path, by its extension; None: not indexed."""
    dot = path.rfind(".")
    if dot <= path.rfind("/") + 1:  # no extension, or a name like ".py" alone
        return None
    return EXTENSIONS.get(path[dot:].lower())


@cache
def grammar(name: str) -> Grammar:
    """The loaded grammar and tags query of a language from `EXTENSIONS`."""
    if name in ("typescript", "tsx"):
        module = importlib.import_module("tree_sitter_typescript")
        language = Language(getattr(module, f"language_{name}")())
        source = _javascript_tags() + "\n" + _packaged_query(module, "tags.scm")
    else:
        module = importlib.import_module(f"tree_sitter_{name}")
        language = Language(module.language())
        source = str(module.TAGS_QUERY) + _EXTRA_REFERENCES.get(name, "")
    query = Query(language, source)
    for pattern in range(query.pattern_count):
        text = source[query.start_byte_for_pattern(pattern) : query.end_byte_for_pattern(pattern)]
        if _EVERY_IDENTIFIER in text:
            query.disable_pattern(pattern)
    return Grammar(name=name, language=language, query=query)


def _javascript_tags() -> str:
    return str(importlib.import_module("tree_sitter_javascript").TAGS_QUERY)


def _packaged_query(module: ModuleType, file: str) -> str:
    return (importlib.resources.files(module) / "queries" / file).read_text(encoding="utf-8")
