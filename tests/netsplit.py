"""A connection whose network vanished, for the tests: `blackholed(fd)` makes the socket behind a
file descriptor silent both ways, as a host that lost its network (or froze) looks from the
other end: no FIN, no RST, no answer; the connection is not closed, it goes quiet.

How, coming in: a classic BPF socket filter that keeps no byte of any packet (`ret #0`,
SO_ATTACH_FILTER). The kernel runs a socket's filter before TCP processes a segment, so the
peer's keepalive probes are never acknowledged. Going out: the socket's own keepalives are
turned off (a vanished host sends none; had they gone on, their unanswered probes would have
made this side close the connection, which the peer would see), and the caller writes nothing
on it meanwhile. Unprivileged, and for this one socket only: the machine's other connections
(the same server's included) are untouched. Leaving the context undoes both.
"""

from __future__ import annotations

import contextlib
import ctypes
import socket
import struct
from collections.abc import Iterator

SO_ATTACH_FILTER, SO_DETACH_FILTER = 26, 27  # <asm-generic/socket.h>
_DROP_ALL = struct.pack("HBBI", 0x06, 0, 0, 0)  # BPF_RET | BPF_K, k=0: keep 0 bytes


@contextlib.contextmanager
def blackholed(fd: int) -> Iterator[None]:
    """While inside, every packet arriving at the socket `fd` is dropped unseen."""
    program = ctypes.create_string_buffer(_DROP_ALL, len(_DROP_ALL))
    fprog = struct.pack("HL", 1, ctypes.addressof(program))  # struct sock_fprog
    sock = socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM)  # a dup: the same socket
    try:
        keepalive = sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 0)
        sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
        try:
            yield
        finally:
            sock.setsockopt(socket.SOL_SOCKET, SO_DETACH_FILTER, 0)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, keepalive)
    finally:
        sock.close()  # the dup only: the connection itself stays open
