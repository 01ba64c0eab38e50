"""The workspace's unittest suite: run `python3 -m unittest` from the workspace root."""
import os
import signal
import sys

try:
    import cli  # noqa: F401 (first: it refuses a Python older than 3.11 in one line)
except SystemExit as refused:  # the test loader would catch it and go on, module after module: stop here
    sys.stderr.flush()
    os._exit(refused.code)

# Started as a background job (`python3 -m unittest &` in a script), the suite inherits Ctrl-C ignored, and
# so would every process it starts: the tests and documented steps that interrupt a script on purpose need
# it back. A background job gets no Ctrl-C from the terminal either way.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
