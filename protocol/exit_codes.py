"""The exit codes of a one-shot run, as the contract fixes them."""

OK = 0
MODEL_ERROR = 1
CHECK_FAILED = 2
EDIT_REJECTED = 3
DAEMON_UNREACHABLE = 4
BAD_ARGUMENTS = 5
INTERRUPTED = 130
