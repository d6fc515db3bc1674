"""Choosing a view for the one-shot command and the REPL.

rich is imported only when the reply goes to a terminal in text format and
the user did not ask for --plain/--no-color; every other case takes the plain
view, so scripts and pipes never pay for rich. NO_COLOR keeps the rich view
(Markdown layout, spinner) without colors.
"""

from __future__ import annotations

from coding_harness.client.args import OneShotOptions
from coding_harness.client.render.plain_view import PlainView
from coding_harness.client.render.style import Style, is_terminal, no_color_requested

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from coding_harness.client.render.rich_view import RichView
    from coding_harness.client.render.view_protocol import View


def rich_wanted(options: OneShotOptions, out: TextIO) -> bool:
    return options.output_format == "text" and not options.plain and is_terminal(out)


def oneshot_view(options: OneShotOptions, style: Style, out: TextIO) -> View:
    """Plain, or rich with a transient `Live` status area on standard output."""
    if not rich_wanted(options, out):
        return PlainView(style, out, stream_reply=False)
    from coding_harness.client.render.rich_view import LiveStatusArea

    view = rich_view(out, style)
    view.area = LiveStatusArea(view.out, view.status_renderable)
    return view


def rich_view(out: TextIO, style: Style) -> RichView:
    """A RichView on `out` (the reply) and the style's stream (everything else)."""
    from coding_harness.client.render.rich_view import RichView, console_for

    return RichView(
        console_for(out, color=not no_color_requested()),
        console_for(style.stream, color=style.color),
    )
