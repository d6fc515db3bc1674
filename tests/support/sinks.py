"""A `StreamSink` that records what a provider streamed, for tests."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RecordingSink:
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)

    def text_delta(self, text: str) -> None:
        self.text.append(text)

    def reasoning_delta(self, text: str) -> None:
        self.reasoning.append(text)
