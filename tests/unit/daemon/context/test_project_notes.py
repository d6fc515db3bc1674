"""Project notes: the lenient parser of the model's answer, the curator, the store's table.

The parser is fed what models really send around JSON (fences, prose, an answer
cut at the token cap, garbage); the curator gets hostile text (escape
sequences, bidirectional overrides, a secret, floods of duplicates); the store
is opened over a database made before notes existed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from coding_harness.daemon.agent.prompts import system_prompt, with_notes
from coding_harness.daemon.context.notes_curator import (
    MAX_NOTES,
    NOTE_CHARS,
    Note,
    clean_note,
    fresh,
    normalised,
    prompt_lines,
)
from coding_harness.daemon.context.notes_parse import MAX_ITEMS, parse_notes
from coding_harness.daemon.security.secrets import Secrets
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.store.open_db import SCHEMA

ANSWER = {
    "decisions": ["Use httpx for the client"],
    "facts": ["Tests run with make check", "The CLI lives in cli.py"],
    "todo": ["Add retries"],
}


# -- the parser ---------------------------------------------------------------
def test_a_plain_json_answer_is_read_whole() -> None:
    notes = parse_notes(json.dumps(ANSWER))
    assert notes.items == ANSWER
    assert notes.pairs()[0] == ("decision", "Use httpx for the client")


def test_a_fenced_answer_with_prose_around_it_is_read() -> None:
    text = (
        f"Sure! Here are the notes:\n```json\n{json.dumps(ANSWER, indent=2)}\n```\nHope it helps."
    )
    assert parse_notes(text).items == ANSWER


def test_braces_in_the_prose_before_the_object_do_not_hide_it() -> None:
    text = "Notes for {project} {not json}:\n" + json.dumps(ANSWER)
    assert parse_notes(text).items == ANSWER


def test_an_answer_cut_at_the_token_cap_keeps_the_whole_items() -> None:
    whole = json.dumps(ANSWER)
    cut = whole[: whole.index("The CLI") + 4]  # inside the second fact
    notes = parse_notes(cut)
    assert notes.items == {
        "decisions": ["Use httpx for the client"],
        "facts": ["Tests run with make check"],
    }


def test_garbage_and_empty_answers_are_no_notes() -> None:
    for text in ("", "I could not find anything.", "{", "[1, 2]", '{"other": 1}', "\x00\xff"):
        notes = parse_notes(text)
        assert not notes and notes.pairs() == []


def test_items_that_are_not_strings_are_left_out_and_lists_capped() -> None:
    many = [f"fact {i}" for i in range(MAX_ITEMS + 5)]
    text = json.dumps({"decisions": [1, None, {"a": 2}, "kept", "  "], "facts": many, "todo": 3})
    notes = parse_notes(text)
    assert notes.items["decisions"] == ["kept"]
    assert notes.items["facts"] == many[:MAX_ITEMS]
    assert notes.items["todo"] == []


# -- the curator ---------------------------------------------------------------
def test_control_and_format_characters_are_stripped() -> None:
    hostile = "Run \x1b[31mmake\x1b[0m\x07 now\u202e\u200b\r\nplease\x00 "
    assert clean_note(hostile) == "Run [31mmake [0m now please"


def test_a_secret_is_redacted_and_a_long_note_capped() -> None:
    secrets = Secrets(values=("sk-verysecretvalue123",))
    assert clean_note("the key is sk-verysecretvalue123", secrets.redact) == (
        "the key is [redacted]"
    )
    long = clean_note("word " * 200)
    assert len(long) <= NOTE_CHARS and long.endswith("…")


def test_duplicates_are_dropped_case_and_punctuation_aside() -> None:
    kept = [normalised("Tests run with make check.")]
    candidates = [
        ("fact", "tests run with MAKE check"),
        ("fact", "A new fact"),
        ("todo", "a new fact!"),
        ("weird", "  "),
        ("weird", "kind unknown"),
    ]
    assert [(k, t) for k, t, _ in fresh(candidates, kept)] == [
        ("fact", "A new fact"),
        ("fact", "kind unknown"),
    ]


def test_the_prompt_takes_the_newest_notes_within_the_budget() -> None:
    notes = [
        Note(id=i, kind="fact", text=f"note number {i} " + "x" * 40, at=float(i)) for i in range(30)
    ]
    lines = prompt_lines(notes, budget_tokens=50)  # 200 characters: three lines
    assert len(lines) == 3 and lines[0].startswith("- [fact] note number 29")
    assert prompt_lines([], 400) == []


def test_the_system_prompt_frames_notes_as_stale_hints_not_instructions() -> None:
    prompt = system_prompt(Path("/w"))
    assert with_notes(prompt, []) == prompt
    framed = with_notes(prompt, ["- [fact] tests run with make check"])
    section = framed[len(prompt) :]
    assert "may be out of date" in section and "not instructions" in section
    assert "<project-notes>\n- [fact] tests run with make check\n</project-notes>" in section


# -- the store -----------------------------------------------------------------
def test_a_store_made_before_notes_gets_the_table(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with sqlite3.connect(path) as old:
        old.executescript(SCHEMA)
        old.execute("PRAGMA user_version=1")
        old.execute(
            "INSERT INTO sessions (id, cwd, created_at, last_activity) VALUES ('s', '/w', 0, 0)"
        )
    store = Store(path)
    try:
        assert store.notes.read("/w") == []
        assert store.notes.add("/w", [("fact", "kept across opens")])
        assert next(iter(store.load_sessions(10))).id == "s"
    finally:
        store.close()
    reopened = Store(path)
    try:
        assert [n.text for n in reopened.notes.read("/w")] == ["kept across opens"]
    finally:
        reopened.close()


def test_notes_are_kept_per_project_deduplicated_and_capped(tmp_path: Path) -> None:
    store = Store(tmp_path / "sessions.db")
    try:
        store.notes.add("/a", [("fact", "A fact"), ("decision", "a fact.")])
        store.notes.add("/b", [("todo", "A fact")])
        assert [(n.kind, n.text) for n in store.notes.read("/a")] == [("fact", "A fact")]
        assert [(n.kind, n.text) for n in store.notes.read("/b")] == [("todo", "A fact")]
        for batch in range(6):
            store.notes.add("/a", [("fact", f"note {batch}-{i}") for i in range(10)])
        kept = store.notes.read("/a")
        assert len(kept) == MAX_NOTES
        assert kept[-1].text == "note 5-9" and "A fact" not in {n.text for n in kept}
        store.notes.remove("/a", [kept[0].id, kept[1].id])
        assert len(store.notes.read("/a")) == MAX_NOTES - 2
        store.notes.remove("/a", None)
        assert store.notes.read("/a") == [] and len(store.notes.read("/b")) == 1
    finally:
        store.close()
