"""`vscode-extension/scripts/package.py` checks a platform bundle before packaging it: every native
module is a binary for the target (read from its header), one per Python version, and every
dependency is there. Real binaries where this machine has them (the environment's libcst), and
the headers of the other formats as the loaders read them."""

from __future__ import annotations

import importlib.util
import shutil
import struct
import sys
from pathlib import Path
from types import ModuleType

import libcst

ROOT = Path(__file__).resolve().parent.parent


def _package_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "package_script", ROOT / "vscode-extension" / "scripts" / "package.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


package = _package_script()
NATIVE = next(Path(libcst.__file__).parent.glob("native*.so"))  # this machine's: linux x64
TAG = f"cpython-{sys.version_info.major}{sys.version_info.minor}"
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def _macho(cpu: int) -> bytes:
    return b"\xcf\xfa\xed\xfe" + struct.pack("<I", cpu) + bytes(56)


def _universal(*cpus: int) -> bytes:
    entries = b"".join(struct.pack(">IIIII", cpu, 0, 0, 0, 0) for cpu in cpus)
    return b"\xca\xfe\xba\xbe" + struct.pack(">I", len(cpus)) + entries


def _pe(machine: int) -> bytes:
    header = bytearray(128)
    header[:2] = b"MZ"
    header[60:64] = struct.pack("<I", 64)
    header[64:68] = b"PE\0\0"
    header[68:70] = struct.pack("<H", machine)
    return bytes(header)


def test_binary_headers_name_their_platform() -> None:
    assert package.binary_kind(NATIVE.read_bytes()[:4096]) == ("linux", {"x64"})
    assert package.binary_kind(_macho(0x0100000C)) == ("darwin", {"arm64"})
    assert package.binary_kind(_macho(0x01000007)) == ("darwin", {"x64"})
    assert package.binary_kind(_universal(0x01000007, 0x0100000C)) == ("darwin", {"x64", "arm64"})
    assert package.binary_kind(_pe(0x8664)) == ("win32", {"x64"})
    assert package.binary_kind(b"#!/bin/sh\n") is None


def _bundle(libs: Path, natives: dict[str, bytes]) -> Path:
    for name in package.DEPENDENCIES:
        folder = package.PACKAGE_OF.get(name, name)
        if folder:
            (libs / folder).mkdir(parents=True, exist_ok=True)
    for name, data in natives.items():
        (libs / name).write_bytes(data)
    return libs


def test_a_linux_bundle_for_linux_passes(tmp_path: Path) -> None:
    libs = _bundle(tmp_path / "libs", {})
    shutil.copy(NATIVE, libs / "libcst" / f"native.{TAG}-x86_64-linux-gnu.so")
    assert package.check_bundle(libs, "linux-x64", [PYTHON]) == []


def test_a_binary_for_another_platform_is_named(tmp_path: Path) -> None:
    libs = _bundle(tmp_path / "libs", {})
    shutil.copy(NATIVE, libs / "libcst" / f"native.{TAG}-darwin.so")  # a linux file, misnamed
    (problem,) = package.check_bundle(libs, "darwin-arm64", [PYTHON])
    assert problem == f"libcst/native.{TAG}-darwin.so: built for linux x64, not darwin arm64"
    # the same file is right for linux, whatever its name says
    assert package.check_bundle(libs, "linux-x64", [PYTHON]) == []


def test_darwin_and_windows_bundles(tmp_path: Path) -> None:
    mac = _bundle(
        tmp_path / "mac",
        {
            "libcst/native.cpython-311-darwin.so": _universal(0x01000007, 0x0100000C),
            "libcst/native.cpython-312-darwin.so": _macho(0x0100000C),
        },
    )
    assert package.check_bundle(mac, "darwin-arm64", ["3.11", "3.12"]) == []
    assert package.check_bundle(mac, "darwin-x64", ["3.11", "3.12"]) == [
        "libcst/native.cpython-312-darwin.so: built for darwin arm64, not darwin x64"
    ]
    win = _bundle(tmp_path / "win", {"libcst/native.cp311-win_amd64.pyd": _pe(0x8664)})
    assert package.check_bundle(win, "win32-x64", ["3.11"]) == []
    assert package.check_bundle(win, "win32-x64", ["3.11", "3.13"]) == [
        "libcst/native: no native module for Python 3.13"
    ]


def test_a_missing_dependency_is_named(tmp_path: Path) -> None:
    libs = _bundle(tmp_path / "libs", {"libcst/native.cp311-win_amd64.pyd": _pe(0x8664)})
    shutil.rmtree(libs / "yaml")
    assert package.check_bundle(libs, "win32-x64", ["3.11"]) == [
        "pyyaml: its package `yaml/` is not in the bundle"
    ]
