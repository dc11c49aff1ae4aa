"""Fixtures shared by the studio's tests."""

import pytest

from mangagen.jobs import services
from mangagen.jobs.models import JobState


@pytest.fixture
def run(enqueued, django_capture_on_commit_callbacks):
    """Helpers that drive the studio as a person and a worker would."""

    class Driver:
        def generate(self, user, board):
            with django_capture_on_commit_callbacks(execute=True):
                return services.generate(user=user, storyboard=board)[0]

        def render(self):
            (job_id, index, attempt), _ = enqueued.pop(0)
            with django_capture_on_commit_callbacks(execute=True):
                return services.perform_render(job_id=job_id, index=index, attempt=attempt)

        def approve(self, job, index):
            with django_capture_on_commit_callbacks(execute=True):
                return services.approve_panel(job=job, index=index)

        def finish(self, job):
            """Renders and approves every panel the job has to draw."""
            while True:
                job.refresh_from_db()
                if job.state == JobState.COMPLETED:
                    return job
                if enqueued:
                    self.render()
                job.refresh_from_db()
                self.approve(job, job.current_index)

        @property
        def queued(self):
            return [args for args, _ in enqueued]

    return Driver()
