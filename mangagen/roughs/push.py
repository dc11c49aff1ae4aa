"""Each rough pushed to its comic's open pages (Review, Storyboard) as it changes.

The comic's stream (`/ws/storyboards/<id>/`, mangagen/web/roughs_stream.py) joins the
comic's group; a rough that is drawn, ready or failed is sent there once the change
commits. At most once, as the job events' channel is: the page also reads
`GET …/roughs/` when it opens the stream, when the stream says it lost something, and
every few seconds while no stream is open.
"""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from mangagen.jobs import publisher

logger = logging.getLogger(__name__)

MESSAGE_TYPE = "storyboard.rough"


def group_name(storyboard_id: int) -> str:
    return f"storyboard-{storyboard_id}"


def push_on_commit(*, storyboard_id: int, data: dict) -> None:
    """Sends `{"type": "rough", "data": data}` to the comic's open pages after commit."""
    transaction.on_commit(lambda: push(storyboard_id, data))


def push(storyboard_id: int, data: dict) -> None:
    """Fans one rough out to the comic's group; losing it is allowed, never fatal."""
    try:
        layer = get_channel_layer()
        if layer is None:
            return
        envelope = {"type": MESSAGE_TYPE, "rough": data}
        if publisher.serves(layer):
            publisher.publisher_for(layer).send(group_name(storyboard_id), envelope)
        else:
            async_to_sync(layer.group_send)(group_name(storyboard_id), envelope)
    except Exception:  # the page reads the roughs again; nothing is lost for good
        logger.warning("Could not push a rough of storyboard %s", storyboard_id, exc_info=True)
