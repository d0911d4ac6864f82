"""Ignores the polite signals, then spins inside C code that never lets Python run (a regular
expression backtracking for ever, holding the GIL)."""

import re
import signal

for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
print("spinning in C", flush=True)
re.match(r"(a+)+b", "a" * 64)  # line: spin
