"""Calls that fail as the operating system makes them fail, then one that ends the script.

Run plainly and under a runtime check (tests/runtime/test_blame.py): each call must raise the
same exception, with the same message, from the same line, and the last one must be reported as
the script's crash at its line, not as torchlint's fault. Writes what it saw to probe.json.
"""

# ruff: noqa: SIM115 (the files are opened to see them fail)
import json
import os
import shutil
import sys
import traceback
from pathlib import Path

import torch

seen = {}


def probe(name, call):
    try:
        call()
    except Exception as exc:  # every failure is the observation
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == __file__]
        seen[name] = [type(exc).__name__, str(exc), frames[-1].lineno if frames else None]
    else:
        seen[name] = ["no error"]


# what the run itself makes (the workspace's own files are notes.txt, data/, runs/, ...)
os.makedirs("made/inner", exist_ok=True)
Path("made/inner/file.txt").write_text("made by the run\n")
Path("made/gone.txt").write_text("deleted below\n")
os.remove("made/gone.txt")

probe("open missing", lambda: open("missing.txt"))
probe("open deleted", lambda: open("made/gone.txt"))
probe("open in missing folder", lambda: open("no_folder/new.txt", "w"))
probe("open a folder", lambda: open("data", "w"))
probe("open bytes path", lambda: open(b"missing.txt", "rb"))
probe("remove missing", lambda: os.remove("missing.txt"))
probe("remove deleted", lambda: os.remove("made/gone.txt"))
probe("remove a folder", lambda: os.remove("data"))
probe("unlink missing", lambda: Path("missing.txt").unlink())
probe("rename missing", lambda: os.rename("missing.txt", "renamed.txt"))
probe("rename into missing folder", lambda: os.rename("notes.txt", "no_folder/notes.txt"))
probe("replace missing", lambda: os.replace("made/gone.txt", "replaced.txt"))
probe("replace a file by a folder", lambda: os.replace("made/inner", "notes.txt"))
probe("mkdir existing", lambda: os.mkdir("data"))
probe("mkdir made", lambda: os.mkdir("made"))
probe("mkdir in missing folder", lambda: os.mkdir("no_folder/child"))
probe("makedirs existing", lambda: os.makedirs("runs/exp1"))
probe("rmdir missing", lambda: os.rmdir("missing_folder"))
probe("rmdir not empty", lambda: os.rmdir("data"))
probe("rmdir made, not empty", lambda: os.rmdir("made/inner"))
probe("rmdir a file", lambda: os.rmdir("notes.txt"))
probe("rmtree missing", lambda: shutil.rmtree("missing_folder"))
probe("listdir missing", lambda: os.listdir("missing_folder"))
probe("listdir a file", lambda: os.listdir("notes.txt"))
probe("scandir deleted", lambda: os.scandir("made/gone.txt"))
probe("stat missing", lambda: os.stat("missing.txt"))
probe("stat deleted", lambda: Path("made/gone.txt").stat())
probe("stat through a file", lambda: os.stat("notes.txt/inside"))
probe("copy missing", lambda: shutil.copy("missing.txt", "copy.txt"))
probe("symlink over existing", lambda: os.symlink("notes.txt", "model.pt"))
probe("readlink a file", lambda: os.readlink("notes.txt"))
probe("chdir missing", lambda: os.chdir("missing_folder"))
probe("chdir a file", lambda: os.chdir("notes.txt"))
probe("torch.load missing", lambda: torch.load("missing.pt"))
probe("torch.load deleted", lambda: torch.load("made/gone.txt"))
probe("torch.save in missing folder", lambda: torch.save({"w": 1}, "no_folder/model.pt"))

Path("probe.json").write_text(json.dumps(seen, indent=1, sort_keys=True))
sys.stdout.flush()
Path("epoch.log").unlink()  # the script's own mistake: the file was never written
