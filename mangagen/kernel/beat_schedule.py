"""Beat's scheduler: Celery's own (a shelve file of when each task last ran), which first
makes the file's folder. The default file is under var/, which a fresh clone lacks (it is
not in git); Celery's scheduler would fail to open it and beat would exit at every start,
and no sweep of stale holds, lost renders or jobs would ever run."""

from __future__ import annotations

from pathlib import Path

from celery.beat import PersistentScheduler


class FolderMakingScheduler(PersistentScheduler):
    def setup_schedule(self) -> None:
        Path(self.schedule_filename).parent.mkdir(parents=True, exist_ok=True)
        super().setup_schedule()
