"""A local S3-compatible server for the tests: moto's, speaking the S3 HTTP API.

The suite starts one per session on a free port (conftest's `s3_server`) and
stops it at the end, so a fresh clone's `make test` and `.ci/run` need nothing
else. Everything goes over real HTTP through boto3, as with any S3 service.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import boto3
from botocore.config import Config

from mangagen.kernel.storage_config import storages
from tests.support.stack import free_port, stop
from tests.support.waiting import wait_for

ACCESS_KEY, SECRET_KEY, REGION = "mangagen-test", "mangagen-test-secret", "us-east-1"


class S3Server:
    """moto's server in a process of its own; use as a context manager."""

    def __init__(self, *, log: Path):
        self.port = free_port()
        self.endpoint_url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> S3Server:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_for(self._answers, timeout=60, every=0.2, what="the S3 server to answer")
        return self

    def __exit__(self, *exc) -> None:
        stop(self.process)

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"the S3 server exited:\n{self.log.read_text()[-4000:]}")
        try:
            self.client().list_buckets()
        except Exception:
            return False
        return True

    def client(self):
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
        )

    def new_bucket(self) -> str:
        """An empty bucket of its own, for one test."""
        name = f"mangagen-{uuid.uuid4().hex[:20]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every object's key in the bucket under `prefix`, sorted."""
        found = []
        pages = self.client().get_paginator("list_objects_v2")
        for page in pages.paginate(Bucket=bucket, Prefix=prefix):
            found += [item["Key"] for item in page.get("Contents", [])]
        return sorted(found)

    def env(self, bucket: str) -> dict[str, str]:
        """The settings a process needs to keep its files in `bucket`."""
        return {
            "STORAGE_BACKEND": "s3",
            "S3_ENDPOINT_URL": self.endpoint_url,
            "S3_BUCKET": bucket,
            "S3_ACCESS_KEY_ID": ACCESS_KEY,
            "S3_SECRET_ACCESS_KEY": SECRET_KEY,
            "S3_REGION": REGION,
        }

    def storages(self, bucket: str) -> dict:
        """Django's STORAGES for `bucket`, as the settings build them for `s3`."""
        return storages(
            backend="s3",
            bucket=bucket,
            endpoint_url=self.endpoint_url,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region=REGION,
        )
