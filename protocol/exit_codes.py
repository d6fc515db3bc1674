"""Exit codes both sides fix: a one-shot run's, as the contract gives them, and harnessd's own."""

OK = 0
MODEL_ERROR = 1
CHECK_FAILED = 2
EDIT_REJECTED = 3
DAEMON_UNREACHABLE = 4
BAD_ARGUMENTS = 5
INTERRUPTED = 130

# harnessd's own (EX_CONFIG): a problem a restart cannot fix. The service unit the
# client writes names it in RestartPreventExitStatus, so both sides take it from here.
DAEMON_CONFIG_PROBLEM = 78
