"""The `STORAGES` setting for each `STORAGE_BACKEND` (read by the settings, and by the
tests that run the storage on both backends). No Django imports: settings load it."""

from __future__ import annotations

# With DEBUG on (tests, `make run`) static files are served from static/ as they are
# (WhiteNoise's finders) and nothing is collected. Without DEBUG, `bin/release` collects
# them into STATIC_ROOT under names that carry a hash of their content, compressed
# (WhiteNoise's manifest storage), so they can be cached for a year (mangagen/kernel/
# static_storage.py).
STATICFILES = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
HASHED_STATICFILES = {"BACKEND": "mangagen.kernel.static_storage.HashedStaticStorage"}


def storages(
    *,
    backend: str,
    bucket: str = "",
    endpoint_url: str = "",
    access_key: str = "",
    secret_key: str = "",
    region: str = "us-east-1",
    hashed_static: bool = False,
) -> dict:
    """Django's STORAGES: the media storage (mangagen/kernel/storage.py) and static files.

    `local` keeps files under MEDIA_ROOT; `s3` in `bucket` of any S3-compatible
    service (`endpoint_url` empty: AWS itself). Raises ValueError for anything else,
    or for s3 without a bucket. `hashed_static`: static files from STATIC_ROOT under
    hashed names (production); otherwise as they are.
    """
    static = HASHED_STATICFILES if hashed_static else STATICFILES
    if backend == "local":
        return {
            "default": {"BACKEND": "mangagen.kernel.storage.LocalMediaStorage"},
            "staticfiles": static,
        }
    if backend != "s3":
        raise ValueError(f"STORAGE_BACKEND must be local or s3, not {backend!r}.")
    if not bucket:
        raise ValueError("STORAGE_BACKEND=s3 needs S3_BUCKET.")
    options = {
        "bucket_name": bucket,
        "endpoint_url": endpoint_url or None,
        "access_key": access_key or None,  # None: boto3's own chain (an IAM role, …)
        "secret_key": secret_key or None,
        "region_name": region,
        # Private objects: nothing is public; the only URLs to the bucket handed out are a
        # reading link's published pages', signed and short-lived (READ_FROM_STORAGE).
        "default_acl": None,
        "querystring_auth": True,
        "file_overwrite": True,  # names are unique, or a content key built twice alike
        "signature_version": "s3v4",
        # MinIO, Ceph and local stand-ins answer at one host: the bucket in the path.
        "addressing_style": "path" if endpoint_url else None,
    }
    return {
        "default": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options},
        "staticfiles": static,
    }
