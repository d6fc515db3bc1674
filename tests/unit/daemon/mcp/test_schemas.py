"""A server's tool as the model sees it: its `mcp__SERVER__TOOL` name, and its input
schema made one that providers accept, with a note whenever it had to change."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from coding_harness.daemon.mcp.schemas import (
    MAX_NAME,
    MAX_SCHEMA_CHARS,
    is_mcp_name,
    model_name,
    provider_schema,
)

OPEN = {"type": "object", "properties": {}}


def test_model_name_joins_server_and_tool() -> None:
    assert model_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert is_mcp_name("mcp__time__get_current_time") and not is_mcp_name("read_file")


def test_model_name_replaces_characters_providers_refuse() -> None:
    assert model_name("docs", "search.pages/v2 é") == "mcp__docs__search_pages_v2__"


def test_model_name_refuses_a_name_longer_than_providers_take() -> None:
    room = MAX_NAME - len("mcp__s__")
    assert model_name("s", "t" * room) == "mcp__s__" + "t" * room
    assert model_name("s", "t" * (room + 1)) is None
    assert model_name("s", "") is None


def test_a_sound_schema_is_unchanged_without_a_note() -> None:
    schema = {
        "type": "object",
        "properties": {"timezone": {"type": "string", "description": "IANA name"}},
        "required": ["timezone"],
        "additionalProperties": False,
    }
    assert provider_schema(schema) == (schema, None)


def test_an_object_schema_without_type_or_properties_is_completed() -> None:
    assert provider_schema({}) == (OPEN, None)
    assert provider_schema({"properties": None}) == (OPEN, None)


def test_local_refs_are_inlined_and_their_definitions_dropped() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "definitions": {"Unit": {"type": "string", "enum": ["m", "km"]}},
        "properties": {
            "at": {"$ref": "#/$defs/Point", "description": "where"},
            "unit": {"$ref": "#/definitions/Unit"},
            "path": {"type": "array", "items": {"$ref": "#/$defs/Point"}},
        },
    }
    out, note = provider_schema(schema)
    assert note is None
    point = {"type": "object", "properties": {"x": {"type": "number"}}}
    assert out == {
        "type": "object",
        "properties": {
            "at": {**point, "description": "where"},
            "unit": {"type": "string", "enum": ["m", "km"]},
            "path": {"type": "array", "items": point},
        },
    }
    assert "$ref" not in json.dumps(out)


def test_a_recursive_ref_is_cut_at_a_depth() -> None:
    schema = {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "child": {"$ref": "#/$defs/Node"}},
            }
        },
        "properties": {"root": {"$ref": "#/$defs/Node"}},
    }
    out, note = provider_schema(schema)
    assert note is None and "$ref" not in json.dumps(out)
    node, depth = out["properties"]["root"], 0
    while node:
        assert node["properties"]["name"] == {"type": "string"}
        node, depth = node["properties"]["child"], depth + 1
    assert 2 < depth < 20  # any value below the cut


@pytest.mark.parametrize("ref", ["#/$defs/Missing", "https://example.com/s.json", "#/properties/a"])
def test_an_unknown_ref_leaves_the_top_level_with_a_note(ref: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "description": "first", "format": "uri"},
            "b": {"$ref": ref},
        },
        "required": ["a", "b", "gone"],
    }
    out, note = provider_schema(schema)
    assert out == {
        "type": "object",
        "properties": {"a": {"type": "string", "description": "first"}, "b": {}},
        "required": ["a", "b"],
    }
    assert note == f"its schema refers to {ref}, which it does not define"


@pytest.mark.parametrize(
    "schema",
    [
        {"anyOf": [{"type": "object"}, {"type": "string"}]},
        {"oneOf": [{"type": "object", "properties": {"a": {}}}]},
        {"type": "object", "allOf": [{"properties": {"a": {}}}]},
        {"type": "string"},
        {"type": ["object", "null"]},
    ],
)
def test_a_schema_that_is_not_a_plain_object_becomes_an_open_one(schema: Any) -> None:
    out, note = provider_schema(schema)
    assert out == OPEN
    assert note == "its schema is not an object schema; any arguments are sent"


@pytest.mark.parametrize("schema", [None, [], "object", 3])
def test_a_schema_that_is_no_json_object_becomes_an_open_one(schema: Any) -> None:
    out, note = provider_schema(schema)
    assert out == OPEN and note is not None and "not a JSON object" in note


def test_combinators_below_the_top_are_kept() -> None:
    schema = {
        "type": "object",
        "properties": {"when": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
    }
    assert provider_schema(schema) == (schema, None)


def test_required_keeps_only_names_that_are_properties() -> None:
    schema = {"type": "object", "properties": {"a": {}}, "required": ["a", "b", 3]}
    out, _ = provider_schema(schema)
    assert out["required"] == ["a"]
    out, _ = provider_schema({"type": "object", "properties": {"a": {}}, "required": "a"})
    assert "required" not in out


@pytest.mark.parametrize("name", ["definitions", "$defs", "$schema", "$id", "$comment", "$ref"])
def test_a_property_named_like_a_keyword_is_kept(name: str) -> None:
    schema = {
        "type": "object",
        "properties": {name: {"type": "string"}, "other": {"type": "integer"}},
        "required": [name],
    }
    out, note = provider_schema(schema)
    assert note is None
    assert out["properties"] == {name: {"type": "string"}, "other": {"type": "integer"}}
    assert out["required"] == [name]


def test_a_nested_property_named_like_a_keyword_is_kept() -> None:
    inner = {"type": "object", "properties": {"definitions": {"type": "array"}}}
    schema = {"type": "object", "properties": {"spec": inner}}
    assert provider_schema(schema) == (schema, None)


def test_a_huge_schema_leaves_only_the_top_level_with_a_note() -> None:
    long_enum = [f"value-{i:05d}" for i in range(MAX_SCHEMA_CHARS // 8)]
    schema = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": long_enum, "description": "d" * 1000},
            "count": {"type": "integer"},
        },
        "required": ["kind"],
    }
    out, note = provider_schema(schema)
    assert out == {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "description": "d" * 300},
            "count": {"type": "integer"},
        },
        "required": ["kind"],
    }
    assert note == "its schema is very large; only the top-level arguments are described"
    assert len(json.dumps(out)) < MAX_SCHEMA_CHARS


class Budget(Exception):
    """A schema was walked many more times than its size could need."""


class CountedSchema(Mapping[str, Any]):
    """A read-only schema object that counts every key read across all its copies and
    fails the test once they pass `limit`: a bound on the work done on a schema."""

    reads = 0
    limit = 200_000

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = {key: counted(value) for key, value in data.items()}

    def __getitem__(self, key: str) -> Any:
        CountedSchema.reads += 1
        if CountedSchema.reads > CountedSchema.limit:
            raise Budget(f"more than {CountedSchema.limit} reads of the schema")
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def counted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return CountedSchema(value)
    if isinstance(value, list):
        return [counted(item) for item in value]
    return value


def test_a_schema_whose_refs_multiply_is_cut_without_walking_every_copy() -> None:
    fan = {f"p{i}": {"$ref": "#/$defs/Node"} for i in range(12)}
    schema = {
        "type": "object",
        "$defs": {"Node": {"type": "object", "properties": fan}},
        "properties": {"root": {"$ref": "#/$defs/Node"}},
    }
    CountedSchema.reads = 0
    out, note = provider_schema(counted(schema))
    assert note is not None and len(json.dumps(out)) <= MAX_SCHEMA_CHARS


def test_a_top_level_ref_is_inlined() -> None:
    args = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    schema = {"$ref": "#/definitions/Args", "definitions": {"Args": args}}
    assert provider_schema(schema) == (args, None)


def test_refs_under_other_keywords_are_inlined() -> None:
    schema = {
        "type": "object",
        "$defs": {"Count": {"type": "integer", "minimum": 0}},
        "properties": {"m": {"type": "object", "additionalProperties": {"$ref": "#/$defs/Count"}}},
    }
    out, note = provider_schema(schema)
    assert note is None
    assert out["properties"]["m"]["additionalProperties"] == {"type": "integer", "minimum": 0}
