"""What a runtime check may touch: a run changes no file that existed before it.

Every write of the user's script lands in the run's scratch folder, and reads of what the run
wrote see it, through one of two mechanisms (the envelope's `isolation.files` says which):

* **overlay** (`namespace.py`): on Linux, where the kernel lets an unprivileged process create a
  mount namespace, the script's folders (working directory, script folder, project root) are
  covered by an overlay filesystem whose upper layer is in the scratch folder. Every process and
  every native library sees it, so nothing written there can reach the real files.
* **redirect** (`redirect.py`): inside the script's Python processes, the file functions of
  `os`, `builtins`/`io`, `shutil` and the native writers we know (`torch.save`, `torch.jit.save`,
  safetensors, h5py, sqlite3) send writes to the scratch folder, copy-on-write. It is always on
  (for paths the overlay does not cover); it cannot see a native library that opens files
  itself.

`scratch.py` is the parent's side: the folder's layout, what the run wrote, `--keep-outputs`.
Nothing here imports torch except the patches of torch's own writers, applied after torch is
imported.
"""
