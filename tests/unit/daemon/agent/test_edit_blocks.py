"""Search/replace blocks written by a model without tools."""

from __future__ import annotations

from coding_harness.daemon.agent.edit_blocks import EditBlock, edit_blocks
from coding_harness.daemon.agent.model_errors import ModelToolsUnsupported
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.providers.errors import error_from_response


def test_blocks_name_their_file_and_leave_the_words() -> None:
    text = (
        "The division multiplies.\n\n"
        "```python\n`calc.py`\n<<<<<<< SEARCH\n    return a * b\n=======\n"
        "    return a / b\n>>>>>>> REPLACE\n```\n\n"
        "new.py\n<<<<<<< SEARCH\n=======\nX = 1\n>>>>>>> REPLACE\nDone."
    )
    blocks, words = edit_blocks(text)
    assert blocks == [
        EditBlock(path="calc.py", search="    return a * b\n", replace="    return a / b\n"),
        EditBlock(path="new.py", search="", replace="X = 1\n"),
    ]
    assert words == "The division multiplies.\n\n\nDone."


def test_an_unclosed_block_is_left_as_text() -> None:
    blocks, words = edit_blocks("calc.py\n<<<<<<< SEARCH\nx\n=======\ny\n")
    assert blocks == [] and "SEARCH" in words


def test_does_not_support_tools_is_its_own_error() -> None:
    profile = ProviderProfile(name="o", type="openai", endpoint="http://127.0.0.1:1/v1", model="m")
    body = '{"error": {"message": "registry.ollama.ai/library/m:latest does not support tools"}}'
    assert isinstance(error_from_response(400, body, {}, profile), ModelToolsUnsupported)
