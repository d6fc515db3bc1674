"""The one exception a tool raises on purpose: a refusal the model can act on.

A `ToolRefusal` is not a bug. Its message is written for the model (what was
wrong, what to do instead) and the registry hands it back as the tool's result.
"""

from __future__ import annotations


class ToolRefusal(Exception):
    """A call the tool will not carry out; `str(self)` is the model-facing reason."""
