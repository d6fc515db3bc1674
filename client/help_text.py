"""`harness --help`'s manual: the description above the flags, and after them every
subcommand, the REPL's keys, approvals, output, exit codes, environment and files.
Read only when argparse builds the parser (`args.build_parser`), never by a plain
one-shot run."""

DESCRIPTION = """\
A coding agent that lives in a background daemon (harnessd, started on first
use). With a prompt, harness runs one task and exits with its code; without one
(and with a terminal on standard input) it opens the REPL. The reply goes to
standard output; tool lines, diffs and notices go to standard error."""

EPILOG = """\
subcommands:
  sessions [--watch|--json]  the sessions: short id, title, folder (or
                             worktree), state (running, waiting for an
                             approval, queued for the model, done, failed),
                             activity, tokens, cost
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
  web [--host ADDR] [--port N]
                             the sessions in a browser (docs/web.md)
  undo [--turn ID] [--list] [--session ID] [--force]
                             put back every file the last turn (or turn ID,
                             and every later one) wrote (docs/undo.md)
  mcp list [--json]          the MCP servers the daemon keeps (and those this
                             folder configures): state, pid, tools, error
  mcp restart NAME           stop the MCP server NAME and start it again
                             (docs/mcp.md)
  worktree [list] | diff ID | merge ID | rm ID [--force]
                             the git worktrees of sessions run with --worktree
  queue [list] | show ID | cancel ID [--json]
                             the team hub's task queue (harness -p TASK
                             --queue puts one in it; docs/team.md)
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
  [y]es / [n]o / [s]kip (skip sends your reason to the model) / [r]evert (yes,
  and put it back if the check fails); a command that asks adds [a]lways. From
  a pipe the answer is read as a line of standard input (echo n | harness -p
  ... rejects); with no answer left, the request waits for `harness approve`.

output:
  At a terminal the reply streams in, then is rendered as Markdown. Into a
  pipe, and under --plain, it is printed once, as the model wrote it. -q
  leaves only the reply and questions for you. --output-format json prints
  one object when the run ends: reply, exit_code, session, usage
  {prompt_tokens, cached_tokens, completion_tokens}, cost_usd,
  files_changed and check; stream-json prints every event as a JSON line,
  then that object. Nothing else goes to standard output in the JSON formats.

exit codes:
  0    done (a --dry-run that showed its diffs is done)
  1    model or network error
  2    the check failed after an applied edit
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
