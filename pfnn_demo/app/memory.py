"""Keep a long-running process's memory flat across scene switches.

Loading a scene builds and frees arrays of tens of MB (terrain mesh, baked light). glibc's
malloc serves such blocks with mmap at first, but each free raises its mmap threshold, so later
ones come from the heap, which fragments and does not shrink: resident memory then wanders up
and down by 100 MB or more as scenes come and go. A fixed threshold keeps large blocks on mmap,
returned to the system as soon as they are freed (measured: 8 tours of every scene stay within
a few MB instead of drifting by tens). Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3
LARGE_BLOCK = 128 * 1024     # glibc's own starting threshold, now held fixed


def return_large_blocks_to_the_system() -> bool:
    """Fix glibc's mmap threshold; True if it took effect."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, LARGE_BLOCK))
    except (OSError, AttributeError):
        return False
