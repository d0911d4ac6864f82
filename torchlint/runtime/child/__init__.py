"""The child process of `torchlint run`, and everything that imports torch.

`python -m torchlint.runtime.child ...` (started only by `torchlint.runtime.launcher`) runs the
user's script under `capture.Capture`; the check itself is a plugin (`plugin.RunPlugin`) named
by the registry in `torchlint.runtime.checks`. The parent package, `torchlint.runtime`, never
imports this one: it reads the envelope the child sends back.
"""
