from rest_framework import serializers


class PublishSerializer(serializers.Serializer):
    """What the owner may choose for the link; each left out keeps the link's choice
    (at first: no download, not indexed, no name shown)."""

    allow_download = serializers.BooleanField(required=False)
    indexable = serializers.BooleanField(required=False)
    pen_name = serializers.CharField(required=False, allow_blank=True, max_length=80)
