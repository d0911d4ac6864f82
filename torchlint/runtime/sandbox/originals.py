"""The file functions as they were before the redirection replaced them: the redirection
itself only ever calls these (a replaced function calling another would redirect twice)."""

import builtins
import io
import os

os_open = os.open
os_stat = os.stat
os_lstat = os.lstat
os_listdir = os.listdir
os_scandir = os.scandir
os_mkdir = os.mkdir
os_rmdir = os.rmdir
os_unlink = os.unlink
os_rename = os.rename
os_replace = os.replace
os_chmod = os.chmod
os_utime = os.utime
os_truncate = os.truncate
os_symlink = os.symlink
os_readlink = os.readlink
os_access = os.access
os_getcwd = os.getcwd
os_chdir = os.chdir
builtin_open = builtins.open
io_open = io.open
