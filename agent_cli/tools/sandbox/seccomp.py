"""The seccomp filter of bash's sandbox: `socket(AF_UNIX, …)` is refused (EPERM), so a command cannot
reach a unix socket outside the workspace (Docker's, D-Bus's, an ssh agent's), and io_uring is refused
because it can open sockets without the socket(2) call. Everything else is allowed; `socketpair` stays
allowed (its sockets are connected only to each other).

The filter is built with pyseccomp (ctypes over libseccomp, which writes the BPF), never assembled by
hand, and handed to bwrap as compiled BPF (`--seccomp FD`). Built once per process: a few hundred
microseconds. When pyseccomp or libseccomp is missing, `unix_socket_filter` says so and the sandbox
runs without the filter (`agent doctor` tells the person).
"""

from __future__ import annotations

import errno
import functools
import os
import socket
from dataclasses import dataclass

REFUSED_SYSCALLS = ("io_uring_setup", "io_uring_enter", "io_uring_register")
FIX = "pip install pyseccomp, and apt install libseccomp2"


@dataclass(frozen=True)
class Filter:
    bpf: bytes = b""  # the compiled program, empty when it could not be built
    problem: str = ""  # why not

    @property
    def available(self) -> bool:
        return bool(self.bpf)


@functools.cache
def unix_socket_filter() -> Filter:
    try:
        import pyseccomp as seccomp
    except ImportError:
        return Filter(problem=f"pyseccomp is not installed ({FIX})")
    except (OSError, RuntimeError) as exc:  # pyseccomp loads libseccomp when imported
        return Filter(problem=f"libseccomp could not be loaded ({exc}; {FIX})")
    try:
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        refuse = seccomp.ERRNO(errno.EPERM)
        rules.add_rule(refuse, "socket", seccomp.Arg(0, seccomp.EQ, socket.AF_UNIX))
        for name in REFUSED_SYSCALLS:
            if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) >= 0:
                rules.add_rule(refuse, name)
        return Filter(bpf=_export(rules))
    except (OSError, ValueError, RuntimeError) as exc:
        return Filter(problem=f"the seccomp filter could not be built ({exc})")


def _export(rules) -> bytes:
    fd = os.memfd_create("agent-seccomp", os.MFD_CLOEXEC)
    try:
        with open(fd, "wb", closefd=False) as out:
            rules.export_bpf(out)
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def filter_fd(bpf: bytes) -> int:
    """A file descriptor (inheritable, at offset 0) holding `bpf`, for `bwrap --seccomp FD`. The caller
    closes it once bwrap has started."""
    fd = os.memfd_create("agent-seccomp", 0)
    try:
        view = memoryview(bpf)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
        return fd
    except OSError:
        os.close(fd)
        raise


__all__ = ["Filter", "filter_fd", "unix_socket_filter"]
