"""Reading .npz archives (networks, heightmaps, recordings, phases), with a reason a person can act
on where a file is not one: numpy's own errors name its internals ("does not support the context
manager protocol") or advise loading pickled objects, which no pfnn-demo file holds."""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import numpy as np

from ..errors import PfnnError

ZIP_STARTS = (b"PK\x03\x04", b"PK\x05\x06")     # a zip's first entry, or an empty archive's end record
NPY_START = b"\x93NUMPY"


def read_npz(path: str | Path, error: type[PfnnError], what: str = "file") -> dict[str, np.ndarray]:
    """Every array of the .npz archive at `path`. Where it cannot be read, `error` (a PfnnError
    class) with the path and one line: "not a readable .npz {what}: why"."""
    path = Path(path)

    def unreadable(reason: str) -> PfnnError:
        return error(f"not a readable .npz {what}: {reason}", path)

    try:
        with open(path, "rb") as file:
            start = file.read(len(NPY_START))
        if not start:
            raise unreadable("it is empty")
        if start.startswith(NPY_START):
            raise unreadable("it is a single .npy array, not an archive of named arrays")
        if start[:4] not in ZIP_STARTS:
            raise unreadable("it is not a zip archive (another format, or damaged)")
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except PfnnError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError):
        raise unreadable("truncated or corrupt") from None
    except OSError as cause:
        raise error(f"cannot read it ({cause.strerror or cause})", path) from None
    except ValueError as cause:
        if "allow_pickle" in str(cause):
            raise unreadable("it holds Python objects, which are never loaded") from None
        raise unreadable(f"an array is damaged ({cause})") from None
