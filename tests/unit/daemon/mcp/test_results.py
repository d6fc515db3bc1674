"""An MCP tool's result as the text the model reads: text kept, structured content when
there is no text, media and binary data named but not sent, errors said first, the whole
capped with a note."""

from __future__ import annotations

import base64
import json

import mcp_types as types
import pytest

from coding_harness.daemon.mcp.results import MAX_RESULT_CHARS, result_text

TOOL = "mcp__s__t"
PNG = base64.b64encode(b"\x89PNG" + b"\0" * 296).decode()  # 300 bytes


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def result(*content: types.ContentBlock, **fields: object) -> types.CallToolResult:
    return types.CallToolResult(content=list(content), **fields)  # type: ignore[arg-type]


def test_text_blocks_are_joined_as_they_are() -> None:
    assert result_text(TOOL, result(text("first"), text("second\nline"))) == "first\nsecond\nline"


def test_structured_content_alone_is_sent_as_json() -> None:
    data = {"datetime": "2026-12-01T18:00:00Z", "zone": "Europe/Zürich"}
    shown = result_text(TOOL, result(structured_content=data))
    assert json.loads(shown) == data and "Zürich" in shown


def test_structured_content_beside_text_is_not_sent_twice() -> None:
    shown = result_text(TOOL, result(text('{"sum": 5}'), structured_content={"sum": 5}))
    assert shown == '{"sum": 5}'


def test_an_empty_result_says_so() -> None:
    assert result_text(TOOL, result()) == "(the tool returned nothing)"


@pytest.mark.parametrize(
    ("block", "kind", "mime"),
    [
        (types.ImageContent(type="image", data=PNG, mime_type="image/png"), "image", "image/png"),
        (types.AudioContent(type="audio", data=PNG, mime_type="audio/wav"), "audio", "audio/wav"),
    ],
)
def test_images_and_audio_are_named_not_sent(
    block: types.ImageContent | types.AudioContent, kind: str, mime: str
) -> None:
    shown = result_text(TOOL, result(text("caption"), block))
    assert shown == f"caption\n[{kind}: {mime}, about 300 bytes; not shown, this model reads text]"
    assert PNG[:20] not in shown


def test_a_resource_link_names_its_address() -> None:
    link = types.ResourceLink(type="resource_link", uri="file:///srv/report.pdf", name="report")
    bare = types.ResourceLink(type="resource_link", uri="https://h/x", name="")
    shown = result_text(TOOL, result(link, bare))
    assert shown == "[resource link: file:///srv/report.pdf (report)]\n[resource link: https://h/x]"


def test_an_embedded_text_resource_is_sent_under_its_address() -> None:
    body = types.TextResourceContents(
        uri="file:///notes.md", mime_type="text/markdown", text="# Hi"
    )
    shown = result_text(TOOL, result(types.EmbeddedResource(type="resource", resource=body)))
    assert shown == "[resource file:///notes.md]\n# Hi"


def test_an_embedded_binary_resource_is_named_not_sent() -> None:
    typed = types.BlobResourceContents(uri="file:///a.bin", mime_type="application/zip", blob=PNG)
    untyped = types.BlobResourceContents(uri="file:///b.bin", blob=PNG)
    blocks = (types.EmbeddedResource(type="resource", resource=r) for r in (typed, untyped))
    shown = result_text(TOOL, result(*blocks))
    assert shown == (
        "[resource file:///a.bin: application/zip data, not shown]\n"
        "[resource file:///b.bin: binary data, not shown]"
    )


def test_an_error_result_says_so_first() -> None:
    shown = result_text(TOOL, result(text("no such zone 'Mars/Base'"), is_error=True))
    assert shown == f"Error from the MCP tool '{TOOL}': no such zone 'Mars/Base'"
    empty = result_text(TOOL, result(is_error=True))
    assert empty == f"Error from the MCP tool '{TOOL}': (the tool returned nothing)"


def test_a_huge_text_is_cut_with_a_note() -> None:
    body = "x" * (MAX_RESULT_CHARS * 3)
    shown = result_text(TOOL, result(text(body)))
    assert shown.startswith("x" * MAX_RESULT_CHARS)
    note = shown[MAX_RESULT_CHARS:]
    assert "x" not in note.split("[", 1)[0]
    assert f"{MAX_RESULT_CHARS} of {MAX_RESULT_CHARS * 3} characters shown" in note
    assert "ask the tool for less" in note


def test_a_result_at_the_cap_is_not_cut() -> None:
    body = "y" * MAX_RESULT_CHARS
    assert result_text(TOOL, result(text(body))) == body


def test_huge_structured_content_is_cut_too() -> None:
    data = {"rows": ["r" * 100] * (MAX_RESULT_CHARS // 50)}
    shown = result_text(TOOL, result(structured_content=data))
    assert len(shown) < MAX_RESULT_CHARS + 300 and "characters shown" in shown
