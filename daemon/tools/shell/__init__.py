"""run_shell: the whitelisted programs, their argument rules, and the
containment of every process a command starts.
"""
