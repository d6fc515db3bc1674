"""Whatever rich renders reaches the terminal made `visible`, markup or not.

Text is made `visible` before it becomes a rich `Text` or `Markdown`, but
rendering can bring control characters back: Markdown decodes character
references, so `&#x202e;` in a reply becomes a right-to-left override and
`&rlm;` a bidi mark. `VisibleSegments` wraps any renderable and escapes the
text of every segment it yields (rich's own styles are not in the text, and
its control segments, cursor moves of a live area, pass as they are).
"""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment

from coding_harness.client.render.sanitize import visible


class VisibleSegments:
    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        for segment in console.render(self.inner, options):
            if segment.control:
                yield segment
            else:
                yield Segment(visible(segment.text), segment.style)
