"""What the studio tells the rest of the project about jobs.

The studio knows nothing of speculation; the speculation app listens here.
Both are sent inside the transaction of the change.
"""

from django.dispatch import Signal

#: A job was confirmed (Generate attached to it). kwargs: job.
job_confirmed = Signal()

#: A live job ended: completed, cancelled, expired or failed. kwargs: job, state, reason.
job_ended = Signal()

#: Generate was clicked (whatever came of it). kwargs: user, storyboard, job, how.
generate_requested = Signal()
