"""Static files as production serves them: collected under hashed names, compressed.

WhiteNoise's CompressedManifestStaticFilesStorage writes `app.<hash>.css` (and its
.gz/.br) into STATIC_ROOT with a manifest (staticfiles.json) that `{% static %}` reads;
WhiteNoise serves those names with a year's cache lifetime, marked immutable, since a
changed file gets a new name. The scripts are ES modules that import one another
(`import { api } from "./api.js"`): Django rewrites those imports to the hashed names
too, so a page never mixes a new module with a cached old one after an upgrade.
"""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class HashedStaticStorage(CompressedManifestStaticFilesStorage):
    support_js_module_import_aggregation = True


def collected(storage: object) -> bool:
    """Whether `storage` (staticfiles_storage) can name the files this process serves:
    true for plain storage (DEBUG: served as they are); for hashed names, whether the
    manifest was there when the process started (it is read once, at start: files
    collected later are served only after a restart)."""
    if not isinstance(storage, HashedStaticStorage):
        return True
    return bool(storage.hashed_files)
