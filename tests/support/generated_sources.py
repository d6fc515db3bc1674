"""Source text of one generated file in each of eight languages (for generated_repo.py).

Each language is a `Syntax`: templates for a file's header, its one class (struct,
type), a top-level function, the statements of a function body, a call and the
construction of another file's class. Templates use @MARKS@ rather than braces,
which half of these languages use themselves: @NAME@ (a function), @CLS@ (a class),
@DOC@, @N@ (a small number), @W@ (a word), @C@ (its first letter), @PKG@ (the folder).
A line `@BODY@` (or `@FUNCTIONS@`) stands for the body (or the functions), at that
line's indentation.

`tags_calls` and `tags_constructs` say whether that grammar's stock tags query
(`TAGS_QUERY`; for TypeScript JavaScript's followed by TypeScript's, which only adds
to it, as the grammar's own tree-sitter.json lists them) sees a call or a
construction as a reference: C's query has no references at all, Rust's none for
`Type::default()`.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Syntax:
    extension: str
    header: str
    klass: str
    function: str
    call: str
    construct: str
    chunks: tuple[str, ...]
    tags_calls: bool
    tags_constructs: bool


@dataclass(kw_only=True, slots=True)
class FilePlan:
    """What one file holds: its names, and what each function calls."""

    language: str
    folder: str
    class_name: str
    functions: list[str]
    calls: list[list[str]]  # per function, the functions of other files it calls
    constructs: str | None  # another file's class the first function builds
    body_lines: int
    seed: int


_C_LIKE_LOOP = """\
for (@INT@ index = 0; index < limit; index++) {
    if (index % @N@ == 0) {
        total += @LEN@ * @N@;
    } else if (@HAS@) {
        total -= @N@;
    } else {
        total += @COUNT@;
    }
}"""


def _c_like(int_type: str, length: str, has: str, count: str) -> str:
    return (
        _C_LIKE_LOOP.replace("@INT@", int_type)
        .replace("@LEN@", length)
        .replace("@HAS@", has)
        .replace("@COUNT@", count)
    )


PYTHON = Syntax(
    extension="py",
    header='"""Rows of @PKG@: parsing, scoring and rendering."""\n\n'
    "from __future__ import annotations\n",
    klass='''class @CLS@:
    """Holds the @W@ counts."""

    def __init__(self) -> None:
        self.count = @N@
        self.label = "@W@"

    def size(self) -> int:
        return self.count + len(self.label)

    def describe(self) -> str:
        return self.label + ":" + str(self.count)
''',
    function='''def @NAME@(text: str, limit: int) -> int:
    """@DOC@"""
    total = 0
    @BODY@
    return total
''',
    call="total += @CALLEE@(text, limit)",
    construct="holder = @CLS@()\ntotal += holder.size()",
    chunks=(
        """for index in range(limit):
    if index % @N@ == 0:
        total += len(text) * @N@
    elif "@W@" in text:
        total -= @N@
    else:
        total += text.count("@W@")""",
        """for word in text.split():
    if word.startswith("@W@") and total < @N@ * limit:
        total += len(word)""",
        """label = "@W@-" + str(limit)
if label.endswith("@C@"):
    total += @N@""",
    ),
    tags_calls=True,
    tags_constructs=True,
)

JAVASCRIPT = Syntax(
    extension="js",
    header="// Rows of @PKG@: parsing, scoring and rendering.\n'use strict';\n",
    klass="""export class @CLS@ {
    constructor() {
        this.count = @N@;
        this.label = "@W@";
    }

    size() {
        return this.count + this.label.length;
    }

    describe() {
        return this.label + ":" + String(this.count);
    }
}
""",
    function="""// @DOC@
export function @NAME@(text, limit) {
    let total = 0;
    @BODY@
    return total;
}
""",
    call="total += @CALLEE@(text, limit);",
    construct="const holder = new @CLS@();\ntotal += holder.size();",
    chunks=(
        _c_like("let", "text.length", 'text.includes("@W@")', 'text.indexOf("@W@")'),
        """for (const word of text.split(" ")) {
    if (word.startsWith("@W@") && total < @N@ * limit) {
        total += word.length;
    }
}""",
        """if (`@W@-${limit}`.endsWith("@C@")) {
    total += @N@;
}""",
    ),
    tags_calls=True,
    tags_constructs=True,
)

TYPESCRIPT = Syntax(
    extension="ts",
    header="// Rows of @PKG@: parsing, scoring and rendering.\n",
    klass="""export class @CLS@ {
    count: number = @N@;
    label: string = "@W@";

    size(): number {
        return this.count + this.label.length;
    }

    describe(): string {
        return `${this.label}:${this.count}`;
    }
}
""",
    function="""/** @DOC@ */
export function @NAME@(text: string, limit: number): number {
    let total: number = 0;
    @BODY@
    return total;
}
""",
    call="total += @CALLEE@(text, limit);",
    construct="const holder = new @CLS@();\ntotal += holder.size();",
    chunks=(
        _c_like("let", "text.length", 'text.includes("@W@")', 'text.indexOf("@W@")'),
        """for (const word of text.split(" ")) {
    if (word.startsWith("@W@") && total < @N@ * limit) {
        total += word.length;
    }
}""",
        """if (`@W@-${limit}`.endsWith("@C@")) {
    total += @N@;
}""",
    ),
    tags_calls=True,
    tags_constructs=True,
)

GO = Syntax(
    extension="go",
    header="// Rows of @PKG@: parsing, scoring and rendering.\npackage @PKG@\n\n"
    'import (\n\t"fmt"\n\t"strings"\n)\n',
    klass="""type @CLS@ struct {
    count int
    label string
}

func (r *@CLS@) size() int {
    return r.count + len(r.label)
}

func (r *@CLS@) describe() string {
    return fmt.Sprintf("%s:%d", r.label, r.count)
}
""",
    function="""// @DOC@
func @NAME@(text string, limit int) int {
    total := 0
    @BODY@
    return total
}
""",
    call="total += @CALLEE@(text, limit)",
    construct="holder := @CLS@{}\ntotal += holder.size()",
    chunks=(
        """for index := 0; index < limit; index++ {
    if index%@N@ == 0 {
        total += len(text) * @N@
    } else if strings.Contains(text, "@W@") {
        total -= @N@
    } else {
        total += strings.Count(text, "@W@")
    }
}""",
        """for _, word := range strings.Fields(text) {
    if strings.HasPrefix(word, "@W@") && total < @N@*limit {
        total += len(word)
    }
}""",
        """if strings.HasSuffix(fmt.Sprint("@W@-", limit), "@C@") {
    total += @N@
}""",
    ),
    tags_calls=True,
    tags_constructs=True,
)

RUST = Syntax(
    extension="rs",
    header="//! Rows of @PKG@: parsing, scoring and rendering.\n",
    klass="""#[derive(Debug, Default)]
pub struct @CLS@ {
    count: i64,
    label: String,
}

impl @CLS@ {
    pub fn size(&self) -> i64 {
        self.count + self.label.len() as i64
    }

    pub fn describe(&self) -> String {
        format!("{}:{}", self.label, self.count)
    }
}
""",
    function="""/// @DOC@
pub fn @NAME@(text: &str, limit: i64) -> i64 {
    let mut total: i64 = 0;
    @BODY@
    total
}
""",
    call="total += @CALLEE@(text, limit);",
    construct="let holder = @CLS@::default();\ntotal += holder.size();",
    chunks=(
        """for index in 0..limit {
    if index % @N@ == 0 {
        total += text.len() as i64 * @N@;
    } else if text.contains("@W@") {
        total -= @N@;
    } else {
        total += text.matches("@W@").count() as i64;
    }
}""",
        """for word in text.split_whitespace() {
    if word.starts_with("@W@") && total < @N@ * limit {
        total += word.len() as i64;
    }
}""",
        """if format!("@W@-{}", limit).ends_with('@C@') {
    total += @N@;
}""",
    ),
    tags_calls=True,
    tags_constructs=False,
)

C = Syntax(
    extension="c",
    header="/* Rows of @PKG@: parsing, scoring and rendering. */\n"
    "#include <stddef.h>\n#include <string.h>\n",
    klass="""struct @CLS@ {
    long count;
    const char *label;
};
""",
    function="""/* @DOC@ */
long @NAME@(const char *text, long limit) {
    long total = 0;
    @BODY@
    return total;
}
""",
    call="total += @CALLEE@(text, limit);",
    construct='struct @CLS@ holder = {@N@, "@W@"};\ntotal += holder.count;',
    chunks=(
        _c_like(
            "long", "(long)strlen(text)", 'strstr(text, "@W@") != NULL', '(long)strspn(text, "@W@")'
        ),
        """for (const char *cursor = text; *cursor != '\\0'; cursor++) {
    if (*cursor == '@C@' && total < @N@ * limit) {
        total += @N@;
    }
}""",
        """if (strncmp(text, "@W@", @N@) == 0) {
    total += @N@;
}""",
    ),
    tags_calls=False,
    tags_constructs=False,
)

JAVA = Syntax(
    extension="java",
    header="// Rows of @PKG@: parsing, scoring and rendering.\npackage @PKG@;\n",
    klass="""public final class @CLS@ {
    private long count = @N@;
    private String label = "@W@";

    public long size() {
        return count + label.length();
    }

    public String describe() {
        return label + ":" + count;
    }

    @FUNCTIONS@
}
""",
    function="""/** @DOC@ */
public static long @NAME@(String text, long limit) {
    long total = 0;
    @BODY@
    return total;
}
""",
    call="total += @CALLEE@(text, limit);",
    construct="@CLS@ holder = new @CLS@();\ntotal += holder.size();",
    chunks=(
        _c_like("int", "text.length()", 'text.contains("@W@")', 'text.indexOf("@W@")'),
        """for (String word : text.split(" ")) {
    if (word.startsWith("@W@") && total < @N@ * limit) {
        total += word.length();
    }
}""",
        """if (("@W@-" + limit).endsWith("@C@")) {
    total += @N@;
}""",
    ),
    tags_calls=True,
    tags_constructs=True,
)

RUBY = Syntax(
    extension="rb",
    header="# Rows of @PKG@: parsing, scoring and rendering.\n",
    klass="""class @CLS@
  def initialize
    @count = @N@
    @label = "@W@"
  end

  def size
    @count + @label.length
  end

  def describe
    "#{@label}:#{@count}"
  end
end
""",
    function="""# @DOC@
def @NAME@(text, limit)
  total = 0
  @BODY@
  total
end
""",
    call="total += @CALLEE@(text, limit)",
    construct="holder = @CLS@.new\ntotal += holder.size",
    chunks=(
        """limit.times do |index|
  if index % @N@ == 0
    total += text.length * @N@
  elsif text.include?("@W@")
    total -= @N@
  else
    total += text.count("@W@")
  end
end""",
        """text.split.each do |word|
  total += word.length if word.start_with?("@W@") && total < @N@ * limit
end""",
        """total += @N@ if "@W@-#{limit}".end_with?("@C@")""",
    ),
    tags_calls=True,
    tags_constructs=True,
)

SYNTAXES: dict[str, Syntax] = {
    "python": PYTHON,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "go": GO,
    "rust": RUST,
    "c": C,
    "java": JAVA,
    "ruby": RUBY,
}

_WORDS = ("alpha", "batch", "cache", "delta", "entry", "frame", "group", "house", "index")
_WORDS += ("judge", "kilo", "lemon", "metric", "north", "order", "patch", "query", "river")
_DOCS = (
    "Score the rows of text up to limit.",
    "Count the matching words, at most limit of them.",
    "Merge the fields of text into a running total.",
    "Check each line of text and weigh it.",
)


def render(plan: FilePlan) -> tuple[str, dict[str, int]]:
    """The file's text, and the 1-based line of each name it defines."""
    syntax = SYNTAXES[plan.language]
    rng = random.Random(plan.seed)
    functions: list[str] = []
    for index, name in enumerate(plan.functions):
        statements = [syntax.call.replace("@CALLEE@", callee) for callee in plan.calls[index]]
        if index == 0 and plan.constructs is not None:
            statements.append(_fill(syntax.construct.replace("@CLS@", plan.constructs), rng))
        body = _body(syntax, statements, plan.body_lines, rng)
        text = syntax.function.replace("@NAME@", name).replace("@DOC@", rng.choice(_DOCS))
        functions.extend(_expand(text, "@BODY@", body))
        functions.append("")
    klass = _fill(syntax.klass.replace("@CLS@", plan.class_name), rng)
    header = syntax.header.replace("@PKG@", _package(plan))
    if "@FUNCTIONS@" in klass:
        lines = [*header.splitlines(), "", *_expand(klass, "@FUNCTIONS@", functions[:-1])]
    else:
        lines = [*header.splitlines(), "", *klass.splitlines(), "", *functions[:-1]]
    return "\n".join(lines) + "\n", _definition_lines(lines, [plan.class_name, *plan.functions])


def _package(plan: FilePlan) -> str:
    if not plan.folder:
        return "root"
    if plan.language == "java":
        return plan.folder.replace("/", ".")
    if plan.language == "go":
        return plan.folder.rsplit("/", 1)[-1]
    return plan.folder


def _fill(template: str, rng: random.Random) -> str:
    word = rng.choice(_WORDS)
    number = str(rng.randint(2, 97))
    return template.replace("@N@", number).replace("@W@", word).replace("@C@", word[0])


def _body(syntax: Syntax, statements: list[str], lines: int, rng: random.Random) -> list[str]:
    """About `lines` lines of loops and conditionals, with `statements` among them."""
    slots: list[list[str]] = []
    count = 0
    while count < lines:
        chunk = _fill(rng.choice(syntax.chunks), rng).splitlines()
        slots.append(chunk)
        count += len(chunk)
    for statement in statements:
        slots.insert(rng.randint(0, len(slots)), statement.splitlines())
    return [line for slot in slots for line in slot]


def _expand(template: str, mark: str, inner: list[str]) -> list[str]:
    """The template's lines, the line holding `mark` replaced by `inner` at its indent."""
    out: list[str] = []
    for line in template.splitlines():
        if line.strip() == mark:
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(indent + part if part else "" for part in inner)
        else:
            out.append(line)
    return out


def _definition_lines(lines: list[str], names: list[str]) -> dict[str, int]:
    """Each name's first line: where the templates put its definition."""
    found: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        for name in names:
            if name not in found and re.search(rf"\b{name}\b", line):
                found[name] = number
    missing = set(names) - found.keys()
    assert not missing, f"a template lost the definition of {sorted(missing)}"
    return found
