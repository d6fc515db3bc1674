"""The README's config example says what the code does (issue 26, item 16): its
profile for Ollama's URL streams, as the built-in default does, and the text
says what the non-streaming `mlx` type is."""

from __future__ import annotations

import json
import re
from pathlib import Path

from coding_harness.protocol.vocabulary import LOCAL_ENDPOINT

README = Path(__file__).resolve().parents[2] / "README.md"


def config_examples() -> list[dict[str, object]]:
    blocks = re.findall(r"```json\n(.*?)```", README.read_text(), flags=re.S)
    return [json.loads(block) for block in blocks if '"providers"' in block]


def test_the_readme_profile_for_ollamas_url_streams_like_the_builtin_one() -> None:
    (config,) = config_examples()
    providers = config["providers"]
    assert isinstance(providers, dict)
    local = [p for p in providers.values() if p["endpoint"] == LOCAL_ENDPOINT]
    assert local and all(p["type"] == "openai" for p in local)


def test_the_readme_says_what_the_mlx_type_means() -> None:
    text = " ".join(README.read_text().split())
    assert '"mlx"' in text and "without streaming" in text and "still read" in text
