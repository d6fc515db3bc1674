"""The one-shot command line: flags, the prompt, and bad arguments (exit 5).

`harness --help` is the manual: the flags (argparse lists them), then every
subcommand, the REPL's keys, output, exit codes, environment and files.

argparse costs about 5 ms to import and run for the first time, a tenth of a
one-shot run, so a plain command line (exact flag names, one run of prompt
words) is read by `_fast_parse`; anything else (abbreviations, `--help`,
mistakes) goes to argparse, which gives the same result or the error.
"""

from __future__ import annotations

from coding_harness.client.option_table import OPTIONS, OUTPUT_FORMATS
from coding_harness.client.session.text_input import check_texts
from coding_harness.protocol.modes import PERMISSION_MODES, READ_ONLY
from coding_harness.protocol.version import __version__

SUBCOMMANDS = (
    "sessions",
    "attach",
    "approve",
    "trust",
    "doctor",
    "completions",
    "daemon",
    "acp",
    "undo",
    "mcp",
    "logs",
    "wait",
)
DAEMON_ACTIONS = ("start", "stop", "restart", "status", "logs", "install", "uninstall")
SHELLS = ("bash", "zsh", "fish")

DESCRIPTION = """\
A coding agent that lives in a background daemon (harnessd, started on first
use). With a prompt, harness runs one task and exits with its code; without one
(and with a terminal on standard input) it opens the REPL. The reply goes to
standard output; tool lines, diffs and notices go to standard error."""

EPILOG = """\
subcommands:
  sessions [--watch|--json]  the sessions: short id, title, folder, state
                             (running, waiting for an approval, queued for
                             the model, done, failed), activity, tokens, cost
  logs ID [-f]               a session's last turn as the one-shot prints it;
                             -f follows it to its end
  wait ID...                 block until each session's turn ends; exit
                             with its exit code (the first failure's)
  sessions rm ID... | prune --older DAYS
                             remove sessions; an ID may be the short id
                             (after the timestamp) or a unique prefix
  attach [ID]                a REPL on an existing session (default: the
                             latest one for this folder)
  approve [ID]               only answer approval requests: of one session,
                             or with no ID of every session, later ones too
  trust                      trust this project's .local_coding_harness.json
                             and .mcp.json
  doctor                     check the set-up; each problem with its fix
  completions bash|zsh|fish  print a shell completion script
  acp                        an Agent Client Protocol agent on stdin/stdout,
                             for editors (docs/editors.md)
  undo [--turn ID] [--list] [--session ID] [--force]
                             put back every file the last turn (or turn ID,
                             and every later one) wrote (docs/undo.md)
  mcp list [--json]          the MCP servers the daemon keeps (and those this
                             folder configures): state, pid, tools, error
  mcp restart NAME           stop the MCP server NAME and start it again
                             (docs/mcp.md)
  daemon start|stop|restart  control the daemon (harness starts it anyway)
  daemon status [--json]     pid, version, uptime, code indexes; exit 4 when
                             none answers (--json: the daemon's answer)
  daemon logs [-n N] [-f]    the end of the daemon's log: N lines, or follow
  daemon install|uninstall   hand the daemon to systemd (Linux) or launchd
                             (macOS), or take it back

  A prompt that starts with a subcommand's name goes through -p.

in the REPL:
  Enter submits; Esc-Enter, or a backslash at the end of the line, starts a
  new line. Tab completes /commands, provider names, model ids, search
  engines and skills. Up/Down walk the history (~/.coding_agent_history),
  Ctrl-R searches it. Typing while a turn runs queues the next task. Ctrl-C
  cancels the running turn and stays (Esc too); Shift-Tab cycles the mode;
  Ctrl-D or /quit leaves, and a running turn goes on in the daemon. !CMD runs
  your own shell command, @PATH attaches a file. /help lists every command.

approvals:
  Each proposed edit shows its full diff with line numbers, then asks
  [y]es / [n]o / [s]kip (skip sends your reason to the model). From a pipe
  the answer is read as a line of standard input (echo n | harness -p ...
  rejects); with no answer left, the request waits for `harness approve`.

output:
  At a terminal the reply streams in, then is rendered as Markdown. Into a
  pipe, and under --plain, it is printed once, as the model wrote it. -q
  leaves only the reply and questions for you. --output-format json prints
  one object when the run ends: reply, exit_code, session, usage
  {prompt_tokens, cached_tokens, completion_tokens}, cost_usd and
  files_changed; stream-json prints every event as a JSON line, then that
  object. Nothing else goes to standard output in the JSON formats.

exit codes:
  0    done (a --dry-run that showed its diffs is done)
  1    model or network error
  2    make check failed after an applied edit
  3    an edit was rejected or skipped
  4    the daemon could not be reached or started
  5    bad arguments
  130  interrupted

environment:
  NO_COLOR                   no colors (the terminal layout stays)
  CODING_AGENT_PROVIDER      the provider profile, below --provider
  CODING_AGENT_MODEL         the model id, below --model
  CODING_HARNESS_SOCKET      the daemon's socket
  XDG_RUNTIME_DIR            the socket's folder otherwise (coding-harness/)
  XDG_STATE_HOME             sessions, the daemon log and --debug logs
                             (~/.local/state/coding-harness/)

files:
  ~/.coding_harness.json     global config
  .local_coding_harness.json project config, merged over it key by key
  ~/.config/coding-agent/config.json
                             legacy config, still read
  ~/.coding_agent_history    REPL history
  ~/.agents/skills/NAME/SKILL.md
                             skills (and .agents/skills/ in the project)

examples:
  harness -p "fix the bug in calc.py"
  git diff | harness --stdin -q "review this"
  harness -y --output-format json -p "rename foo to bar" | jq .files_changed
  source <(harness completions bash)
"""


# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any, NoReturn


class UsageError(Exception):
    pass


class OneShotOptions:
    """The parsed flags (a plain class: `dataclasses` is slow to import)."""

    def __init__(self, **values: object) -> None:
        self.prompts: list[str] = []
        self.words: list[str] = []
        self.stdin = False
        self.yes = False
        self.dry_run = False
        self.mode: str | None = None
        self.provider: str | None = None
        self.model: str | None = None
        self.cwd: str | None = None
        self.session: str | None = None
        self.continued = False
        self.resume: str | None = None
        self.quiet = False
        self.verbose = False
        self.plain = False
        self.debug = False
        self.output_format = "text"
        self.version = False
        self.bg = False
        for key, value in values.items():
            if not hasattr(self, key):
                raise TypeError(f"unknown option {key!r}")
            setattr(self, key, value)


def _dest(names: tuple[str, ...], settings: dict[str, Any]) -> str:
    """The attribute argparse stores an option in."""
    return str(settings.get("dest") or names[-1].lstrip("-").replace("-", "_"))


# What `_fast_parse` reads: switches, and options that take a value.
_SWITCHES = {
    name: _dest(names, settings)
    for names, settings in OPTIONS
    if settings.get("action") == "store_true"
    for name in names
}
_VALUED = {
    name: _dest(names, settings)
    for names, settings in OPTIONS
    if settings.get("action") in (None, "append")
    for name in names
}


def build_parser() -> argparse.ArgumentParser:
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(message)

    parser = _Parser(
        prog="harness",
        usage="harness [options] [PROMPT ...]\n       harness SUBCOMMAND ...",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "words", nargs="*", metavar="PROMPT", help="the task (words joined by spaces)"
    )
    for names, settings in OPTIONS:
        parser.add_argument(*names, **settings)
    return parser


def parse_oneshot(argv: list[str]) -> OneShotOptions:
    options = _fast_parse(argv)
    if options is None:
        options = OneShotOptions(**vars(build_parser().parse_args(argv)))
    if options.yes and options.dry_run:
        raise UsageError("--yes and --dry-run contradict each other; pass one")
    if options.yes and options.mode == READ_ONLY:
        raise UsageError("--yes and --mode read-only contradict each other; pass one")
    check_texts(options)
    return options


def _fast_parse(argv: list[str]) -> OneShotOptions | None:
    """What argparse would make of a plain command line; None to let argparse decide."""
    options = OneShotOptions()
    words_seen = words_ended = False
    rest = iter(argv)
    for arg in rest:
        if not arg.startswith("-"):
            if words_ended:
                return None  # a second run of words: argparse refuses it
            words_seen = True
            options.words.append(arg)
            continue
        words_ended = words_seen
        name, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _SWITCHES and not equals:
            setattr(options, _SWITCHES[name], True)
            continue
        if name not in _VALUED:
            return None
        if not equals:
            value = next(rest, "-")
            if value.startswith("-"):
                return None
        if not _store(options, _VALUED[name], value):
            return None
    return options


# The options whose value is one of a few words (argparse's `choices`).
_CHOICES = {"output_format": OUTPUT_FORMATS, "mode": PERMISSION_MODES}


def _store(options: OneShotOptions, key: str, value: str) -> bool:
    if key == "prompts":
        options.prompts.append(value)
    elif key in _CHOICES and value not in _CHOICES[key]:
        return False
    else:
        setattr(options, key, value)
    return True


def version_text() -> str:
    return f"harness {__version__}"
