"""A job as the API and the job page see it (docs/api.md, "Jobs")."""

from rest_framework import serializers

from mangagen.renderers import public

from .models import Job, JobPanel, PanelState
from .selectors import image_url

# A panel's check is of the render it has: rendered, shown or approved.
CHECKED_STATES = (PanelState.READY, PanelState.DELIVERED, PanelState.APPROVED)


class JobPanelSerializer(serializers.ModelSerializer):
    image_url = serializers.SerializerMethodField()
    description = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()
    check = serializers.SerializerMethodField()

    class Meta:
        model = JobPanel
        fields = [
            "index",
            "state",
            "image_url",
            "attempts",
            "content_hash",
            "description",
            "error",
            "check",
            "from_rough",
            "aspect",
        ]

    def get_image_url(self, obj) -> str | None:
        return image_url(obj, self.context["job"])

    def get_description(self, obj) -> str:
        return obj.spec.get("description", "")

    def get_check(self, obj) -> dict | None:
        """What the judge said of the render kept (docs/api.md, "Checked before shown"):
        null when unchecked, and while a panel has no render to show."""
        return obj.judge_check if obj.state in CHECKED_STATES else None

    def get_error(self, obj) -> str:
        """What the person is told of a failed render, in the request's language: the
        stored text is one of the renderers' public messages, in English."""
        return public.shown(obj.error)


class JobSerializer(serializers.ModelSerializer):
    panels = serializers.SerializerMethodField()
    title = serializers.CharField(source="storyboard.title", read_only=True)

    class Meta:
        model = Job
        fields = [
            "id",
            "storyboard",
            "title",
            "version",
            "confirmed",
            "state",
            "current_index",
            "panels",
            "created_at",
            "confirm_by",
            "expires_at",
            "last_seq",
        ]

    def get_panels(self, obj) -> list[dict]:
        return list(JobPanelSerializer(obj.panels.all(), many=True, context={"job": obj}).data)
