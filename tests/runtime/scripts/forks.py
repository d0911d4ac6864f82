"""Starts workers that would outlive it, then leaves as `sys.argv[2]` says: `crash`, `exit`
(os._exit) or `hang`; `detach` also starts one in a session of its own (as a daemon would) and
exits. `sys.argv[1]` is a token put in every worker's command line."""

import multiprocessing
import os
import subprocess
import sys
import time

token, how = sys.argv[1], sys.argv[2]
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", token])
subprocess.Popen(["sh", "-c", "sleep 600; : " + token])
worker = multiprocessing.get_context("fork").Process(target=time.sleep, args=(600,))
worker.start()  # forked: the same command line as this process, token included
print(f"started workers for {token}", flush=True)
if how == "detach":
    subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", token], start_new_session=True
    )
    os._exit(0)
if how == "crash":
    raise RuntimeError("the main process died first")  # line: raise
if how == "exit":
    os._exit(7)
while True:
    time.sleep(0.05)  # line: hang
