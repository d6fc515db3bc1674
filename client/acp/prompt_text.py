"""An ACP prompt (a list of content blocks) as the task text the daemon takes.

Text blocks are the request. A resource link (a file the user pointed at with
@) becomes a line naming the file, workspace-relative when it lies inside, so
the agent reads it with its own tools; an embedded resource (the editor sent the
text, perhaps of an unsaved buffer) comes with its contents, fenced. Images and
audio are refused with a message, since initialize did not offer them; a binary
embedded resource is named, not sent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import schema

Block = (
    schema.TextContentBlock
    | schema.ImageContentBlock
    | schema.AudioContentBlock
    | schema.ResourceContentBlock
    | schema.EmbeddedResourceContentBlock
)


class UnsupportedContent(ValueError):
    """A block this agent did not offer to take (an image, audio)."""


def prompt_text(blocks: list[Block] | list[Any], cwd: str) -> str:
    """The task text of a prompt's content blocks, in their order."""
    parts: list[str] = []
    root = Path(cwd)
    for block in blocks:
        if isinstance(block, schema.TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, schema.ResourceContentBlock):
            parts.append(f"[file: {_shown(block.uri, root)}]")
        elif isinstance(block, schema.EmbeddedResourceContentBlock):
            parts.append(_embedded(block.resource, root))
        else:
            kind = getattr(block, "type", "this")
            raise UnsupportedContent(
                f"{kind} content is not supported by this agent; send text, or attach files"
            )
    return "\n".join(part for part in parts if part)


def _embedded(
    resource: schema.TextResourceContents | schema.BlobResourceContents, root: Path
) -> str:
    shown = _shown(resource.uri, root)
    if isinstance(resource, schema.BlobResourceContents):
        return f"[file: {shown} (binary, not included)]"
    text = resource.text if resource.text.endswith("\n") else resource.text + "\n"
    fence = "````" if "```" in text else "```"
    return f"Contents of {shown}:\n{fence}\n{text}{fence}"


def _shown(uri: str, root: Path) -> str:
    """A file URI as a path relative to the workspace when it is inside it."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return uri
    path = Path(unquote(parsed.path))
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
