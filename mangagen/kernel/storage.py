"""Where every file of the studio lives: Django's default storage (settings `STORAGES`).

`STORAGE_BACKEND=local` keeps them under `MEDIA_ROOT` (`LocalMediaStorage`);
`s3` keeps them in a bucket of any S3-compatible service (django-storages'
`S3Storage`), so web processes and workers on different machines see the
same files. Code reads and writes through `default_storage` (or a
`FileField`'s storage) by name, never by a local path, so it runs the same
on both. Nothing here is served directly: the views check the owner and
stream the bytes (see docs/architecture.md, "Files").
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

from django.core.files.storage import FileSystemStorage, default_storage
from django.db import transaction


class LocalMediaStorage(FileSystemStorage):
    """MEDIA_ROOT on this machine's disk, writing as an object store does.

    A name saved again replaces the file whole, atomically (a temporary file
    renamed into place): a reader sees the old file or the new one, never half
    of one, and two requests building the same page both end with one
    complete file under its name, as two PUTs of one S3 key do.
    """

    def __init__(self, **options):
        options.setdefault("allow_overwrite", True)
        super().__init__(**options)

    def _save(self, name, content):
        full_path = self.path(name)
        directory = os.path.dirname(full_path)
        os.makedirs(directory, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".", suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out:
                for chunk in content.chunks():
                    out.write(chunk if isinstance(chunk, bytes) else chunk.encode())
            if self.file_permissions_mode is not None:
                os.chmod(temporary, self.file_permissions_mode)
            os.replace(temporary, full_path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        return os.path.relpath(full_path, self.location).replace("\\", "/")


def read(name: str) -> bytes | None:
    """The bytes stored under `name`, or None when there is no such file."""
    try:
        with default_storage.open(name, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def deleted_if_raised(*, folder: str | None = None) -> Iterator[list[str]]:
    """A list to add the names of files stored inside the block to; if the block raises
    (its transaction rolled back, so no row will ever name them), they are deleted, and
    `folder` (one of the block's own, e.g. a snapshot's) with everything in it, its
    empty folders too.

    Put the block's `transaction.atomic` inside this one: a file is stored before the
    row that names it, and a transaction cannot take a file back."""
    saved: list[str] = []
    try:
        yield saved
    except BaseException:
        for name in saved:
            default_storage.delete(name)
        if folder is not None:
            delete_folder(folder)
        raise


def deleted_on_commit(names: list[str]) -> None:
    """Deletes the files `names` once the transaction that stopped naming them commits
    (a rollback keeps them: their rows still name them)."""
    names = [name for name in names if name]
    if names:
        transaction.on_commit(lambda: [default_storage.delete(n) for n in names], robust=True)


def delete_folder(prefix: str) -> int:
    """Deletes every file under the folder `prefix` (e.g. "pages/7"), however deep;
    returns how many. A folder that does not exist deletes nothing."""
    try:
        folders, files = default_storage.listdir(prefix)
    except FileNotFoundError:
        return 0
    count = 0
    for name in files:
        default_storage.delete(f"{prefix}/{name}")
        count += 1
    for folder in folders:
        count += delete_folder(f"{prefix}/{folder}")
    if isinstance(default_storage, FileSystemStorage):
        # An object store has no folders; a disk keeps empty ones unless told.
        with contextlib.suppress(OSError):
            os.rmdir(default_storage.path(prefix))
    return count


def numbered_folders(root: str) -> list[int]:
    """The folders directly under `root` named by a number (a job's or a storyboard's id)."""
    try:
        folders, _ = default_storage.listdir(root)
    except FileNotFoundError:
        return []
    return [int(name) for name in folders if name.isascii() and name.isdigit()]
