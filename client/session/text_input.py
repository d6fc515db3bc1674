"""Text from the command line and standard input, checked before it goes to the daemon.

The wire carries UTF-8 only. Python hands over command-line words and file
names that are not UTF-8 as lone surrogates ("surrogateescape"), which cannot
be sent; rather than replace the bad bytes (the model would be sent
something other than what was typed) the client refuses the input, naming
the first bad byte and its offset, and exits 5 (`BadInput`).
"""

from __future__ import annotations


class BadInput(Exception):
    """Input that cannot be sent to the daemon; said in one line, exit 5."""


UTF8_FIX = "convert it to UTF-8 first (for example with iconv -f latin1 -t utf-8)"


def utf8_problem(text: str) -> str | None:
    """Where `text`, as the OS handed it over, stops being UTF-8; None when it is UTF-8.

    The original bytes are recovered from the surrogates to name the first bad
    one and its byte offset.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return None
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        return f"a lone surrogate at character {exc.start}"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte 0x{raw[exc.start]:02x} at offset {exc.start}"
    return None  # pragma: no cover - the text did not encode, so the bytes cannot decode


def decode_input(data: bytes, what: str) -> str:
    """`data` as UTF-8 text, or BadInput naming the first bad byte, its offset and line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BadInput(
            f"{what} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}, "
            f"line {line}); {UTF8_FIX}"
        ) from None


def check_texts(options: object) -> None:
    """Every text the run sends to the daemon is UTF-8, or BadInput naming which is not
    (`options`: the command line's `OneShotOptions`)."""
    prompts: list[str] = getattr(options, "prompts", [])
    words: list[str] = getattr(options, "words", [])
    many = len(prompts) > 1
    named = [
        *((f"-p text #{n}" if many else "the -p text", t) for n, t in enumerate(prompts, 1)),
        *((f"prompt word {n}", word) for n, word in enumerate(words, 1)),
        *((f"--{key}", getattr(options, key)) for key in ("provider", "model", "session")),
    ]
    for what, text in named:
        problem = text and utf8_problem(text)
        if problem:
            raise BadInput(f"{what} is not valid UTF-8 ({problem}); {UTF8_FIX}")
