"""The parent's side of a run's file isolation: the scratch folder, what the run wrote, and
`--keep-outputs`.

The launcher's temporary folder for one run holds

    files/<absolute path>   what the script wrote, by the in-process redirection
    deleted.jsonl           the user's files the script deleted or moved (they stay on disk)
    overlay/<k>/upper       what was written into each overlaid folder (overlay mechanism)
    isolation.json          which mechanism was used, written by `namespace.py`
    tmp/                    the run's TMPDIR

and is removed when the run ends, unless the outputs are kept: then every file the run wrote is
copied to the folder the user named, under its path relative to the working directory (or under
`_outside/` with its absolute path), with `torchlint-outputs.json` listing them.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchlint.project.layout import find_project_root
from torchlint.runtime.sandbox.install import configuration
from torchlint.runtime.sandbox.namespace import STATUS_FILE
from torchlint.runtime.sandbox.redirect import ENVIRONMENT_VARIABLE

#: isolation modes: `auto` uses the overlay where the system allows it, else the redirection
MODES = ("auto", "overlay", "redirect")
#: files listed in the envelope (all are counted)
LISTED_FILES = 50
#: the manifest written into a `--keep-outputs` folder
MANIFEST = "torchlint-outputs.json"
#: check options naming a file torchlint itself writes for the user (`--plot`, `--trace`)
DELIVERED_OPTIONS = ("plot", "trace")
_BOOT = Path(__file__).resolve().parent / "boot"


@dataclass(frozen=True)
class Written:
    path: str  # absolute path the script used
    bytes: int
    existed: bool  # the user had a file there (the run's copy replaced it in its view)
    source: Path  # where the run's version is, inside the scratch folder


@dataclass
class Outputs:
    written: list[Written] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


def protected_folders(cwd: Path, script: Path) -> list[str]:
    """The folders an overlay covers: the working directory, the script's folder and its
    project root, without the ones inside another."""
    candidates = {
        os.path.realpath(p) for p in (cwd, script.parent, find_project_root(script.resolve()))
    }
    ordered = sorted(candidates, key=len)
    kept: list[str] = []
    for folder in ordered:
        if not any(folder == k or folder.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(folder)
    return kept


class RunFiles:
    """One run's scratch folder (inside the launcher's temporary folder `root`)."""

    def __init__(self, root: Path, mode: str = "auto") -> None:
        if mode not in MODES:
            raise ValueError(f"unknown isolation mode {mode!r}")
        self.root = root
        self.mode = mode
        self.files = root / "files"
        self.tmp = root / "tmp"
        self.files.mkdir()
        self.tmp.mkdir()
        self.delivered: list[tuple[Path, Path]] = []  # (folder in the scratch, user's folder)

    def environment(self) -> dict[str, str]:
        """Variables for the script's processes: the redirection's configuration (every Python
        process of the run installs it at start-up, from `boot/sitecustomize.py`), the run's
        TMPDIR, and no `__pycache__` written into the user's folders."""
        return {
            ENVIRONMENT_VARIABLE: configuration(str(self.root)),
            "TMPDIR": str(self.tmp),
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    @staticmethod
    def boot_path() -> str:
        return str(_BOOT)

    def import_path(self) -> str:
        """The folder the run's processes import torchlint from: it holds torchlint alone (a
        link to this package), so the rest of the environment torchlint is installed in (its
        site-packages, or the checkout's other folders) never shadows what the user's
        interpreter has. The child needs nothing else from here: it runs on the user's torch."""
        package = Path(__file__).resolve().parents[2]
        folder = self.root / "imports"
        try:
            folder.mkdir(exist_ok=True)
            link = folder / package.name
            if not link.is_symlink():
                link.symlink_to(package, target_is_directory=True)
        except OSError:  # no symbolic links here: the package's own folder, as before
            return str(package.parent)
        return str(folder)

    def wrap(self, command: list[str], python: str, folders: list[str]) -> list[str]:
        """The command, put under overlay mounts where the mode allows it (Linux only)."""
        if self.mode == "redirect" or not sys.platform.startswith("linux"):
            return command
        wrapper = [python, "-S", "-m", "torchlint.runtime.sandbox.namespace"]
        wrapper += ["--scratch", str(self.root), "--mode", self.mode]
        for folder in folders:
            wrapper += ["--protect", folder]
        return [*wrapper, "--", *command]

    def deliverable_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The options for the child: a file torchlint writes for the user (a plot, a trace)
        is written into the scratch folder, which the run can write to whatever the
        mechanism, and copied to where the user asked by `deliver()`."""
        changed = dict(options)
        for name in DELIVERED_OPTIONS:
            value = options.get(name)
            if isinstance(value, str):
                wanted = Path(value)
                inside = self.root / "deliver" / name
                inside.mkdir(parents=True)
                self.delivered.append((inside, wanted.parent))
                changed[name] = str(inside / wanted.name)
        return changed

    def deliver(self, result: dict[str, Any]) -> None:
        """Copy torchlint's own output files to the user's folders, and name them there in
        the envelope."""
        renames: dict[str, str] = {}
        for inside, folder in self.delivered:
            for produced in sorted(inside.iterdir()):
                target = folder / produced.name
                try:
                    shutil.copyfile(produced, target)
                    renames[str(produced)] = str(target)
                except OSError as exc:
                    renames[str(produced)] = f"{target} (could not write it: {exc.strerror})"
            renames.setdefault(str(inside), str(folder))
        if renames:
            _rename_strings(result, renames)

    def status(self) -> dict[str, Any]:
        """What `namespace.py` recorded (the redirection alone when it did not run)."""
        try:
            recorded = json.loads((self.root / STATUS_FILE).read_text("utf-8"))
        except (OSError, ValueError):
            recorded = None
        if not isinstance(recorded, dict):
            reason = (
                "asked for with --isolation redirect"
                if self.mode == "redirect"
                else "overlay mounts need Linux"
            )
            return {"mechanism": "redirect", "protected": [], "layers": [], "reason": reason}
        return recorded

    def outputs(self) -> Outputs:
        """Everything the run wrote or deleted, through either mechanism."""
        found = Outputs()
        for source, virtual in _walk_files(self.files, "/"):
            found.written.append(_written(source, virtual))
        for layer in self.status().get("layers") or []:
            upper, folder = Path(str(layer.get("upper"))), str(layer.get("folder"))
            for source, virtual in _walk_files(upper, folder, found.deleted):
                found.written.append(_written(source, virtual))
        try:
            lines = (self.root / "deleted.jsonl").read_text("utf-8", "surrogateescape")
        except OSError:
            lines = ""
        for line in lines.splitlines():
            try:
                path = json.loads(line)
            except ValueError:
                continue
            if isinstance(path, str) and path not in found.deleted:
                found.deleted.append(path)
        written = {w.path for w in found.written}
        found.deleted = [d for d in found.deleted if d not in written]
        found.written.sort(key=lambda w: w.path)
        return found

    def summary(self, cwd: Path, kept: Path | None = None) -> dict[str, Any]:
        """The envelope's `isolation.files`."""
        status = self.status()
        outputs = self.outputs()
        shown = [
            {"path": _shown(w.path, cwd), "bytes": w.bytes, "existed": w.existed}
            for w in outputs.written[:LISTED_FILES]
        ]
        return {
            "mechanism": status.get("mechanism", "redirect"),
            "protected": list(status.get("protected") or []),
            "reason": status.get("reason"),  # why the overlay was not used
            "written": shown,
            "written_count": len(outputs.written),
            "deleted": [_shown(p, cwd) for p in outputs.deleted[:LISTED_FILES]],
            "deleted_count": len(outputs.deleted),
            "kept_in": str(kept) if kept is not None else None,
        }

    def keep(self, destination: Path, cwd: Path) -> None:
        """Copy what the run wrote into `destination` (which must not hold files yet)."""
        outputs = self.outputs()
        destination.mkdir(parents=True, exist_ok=True)
        listing = []
        for written in outputs.written:
            relative = _relative_name(written.path, cwd)
            target = destination / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if written.source.is_symlink():
                target.symlink_to(os.readlink(written.source))
            else:
                shutil.copyfile(written.source, target)
            listing.append({"path": written.path, "kept_as": relative, "bytes": written.bytes})
        manifest = {"written": listing, "deleted": outputs.deleted}
        (destination / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")

    def remove(self) -> None:
        remove_tree(self.root)


def check_keep_folder(folder: Path) -> str | None:
    """Why `--keep-outputs FOLDER` cannot be used (None: it can): it must be a new or empty
    folder, so that keeping outputs never overwrites a file."""
    if folder.exists() and not folder.is_dir():
        return f"{folder} exists and is not a folder"
    if folder.is_dir() and any(folder.iterdir()):
        return f"{folder} is not empty (outputs are kept in a new or empty folder)"
    return None


def remove_tree(folder: Path) -> None:
    """Remove a scratch folder, including an overlay's work folders (created without any
    permission bits) and whiteouts."""

    def retry(function: Any, path: str, _exc: Any) -> None:
        try:
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass

    if folder.exists():
        shutil.rmtree(folder, onerror=retry)


def _rename_strings(value: Any, renames: dict[str, str]) -> Any:
    """Replace scratch paths in every string of an envelope, in place."""
    if isinstance(value, dict):
        for key, item in value.items():
            value[key] = _rename_strings(item, renames)
    elif isinstance(value, list):
        value[:] = [_rename_strings(item, renames) for item in value]
    elif isinstance(value, str):
        for old in sorted(renames, key=len, reverse=True):
            if old in value:
                value = value.replace(old, renames[old])
    return value


def _walk_files(
    root: Path, mount: str, whiteouts: list[str] | None = None
) -> list[tuple[Path, str]]:
    """(file in the scratch folder, the path it stands for) for the regular files and links
    under `root`; an overlay's whiteouts (character devices 0:0) go to `whiteouts`."""
    found: list[tuple[Path, str]] = []
    if not root.is_dir():
        return found
    for folder, dirs, names in os.walk(root):
        for name in [*names, *[d for d in dirs if os.path.islink(os.path.join(folder, d))]]:
            source = Path(folder, name)
            relative = os.path.relpath(source, root)
            virtual = os.path.normpath(os.path.join(mount, relative))
            try:
                info = source.lstat()
            except OSError:
                continue
            if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
                if whiteouts is not None and virtual not in whiteouts:
                    whiteouts.append(virtual)
                continue
            if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                found.append((source, virtual))
    return found


def _written(source: Path, virtual: str) -> Written:
    try:
        size = source.lstat().st_size
    except OSError:
        size = 0
    return Written(virtual, size, os.path.lexists(virtual), source)


def _relative_name(path: str, cwd: Path) -> str:
    base = os.path.realpath(cwd)
    if path == base or path.startswith(base.rstrip("/") + "/"):
        return os.path.relpath(path, base)
    return os.path.join("_outside", path.lstrip("/"))


def _shown(path: str, cwd: Path) -> str:
    base = os.path.realpath(cwd)
    if path.startswith(base.rstrip("/") + "/"):
        return os.path.relpath(path, base)
    return path
