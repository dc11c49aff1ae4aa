"""The owner's side of reading links (docs/api.md, "Reading links"): publish, publish
again, stop sharing; for a comic and for a series. Another person's comic: 404."""

from drf_spectacular.utils import OpenApiTypes, extend_schema, extend_schema_view
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from mangagen.api.bodies import json_object
from mangagen.api.schema import refuses
from mangagen.api.throttles import WritesThrottle
from mangagen.characters.models import UploadProblem
from mangagen.kernel.quotas import Limit
from mangagen.pages.errors import NothingToExport
from mangagen.series.api import owned_series
from mangagen.storyboards.selectors import owned_storyboard

from . import selectors, services
from .serializers import PublishSerializer


def _options(request) -> services.Options:
    serializer = PublishSerializer(data=json_object(request))
    serializer.is_valid(raise_exception=True)
    return services.Options(**serializer.validated_data)


def _published(link, created: bool) -> Response:
    code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
    return Response(selectors.link_json(link), status=code)


# The calls that read and change a reading link (its link, publishing, stopping), by
# what they name the thing shared.
CALLS = {
    "storyboard": (selectors.link_of_comic, services.publish_comic, services.stop_sharing_comic),
    "series": (selectors.link_of_series, services.publish_series, services.stop_sharing_series),
}


# A reading link's owner side, a comic's or a series': the owner's thing, found by its
# key (`owned`; `whole` to publish it), its link, publishing it (again), stopping. A
# comment, not a docstring: the schema would take a view's docstring for its operations'.
class _Publishing(APIView):
    throttle_classes = [WritesThrottle]
    throttle_scope = "export"
    what: str  # what is shared, as the schema's summaries name it
    keyword: str  # what the CALLS name it
    publishing: str  # the schema's summary of publishing it

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        whose = f"{cls.what}'" if cls.what.endswith("s") else f"{cls.what}'s"
        extend_schema_view(
            get=extend_schema(
                responses=OpenApiTypes.OBJECT, summary=f"The {whose} reading link, if shared"
            ),
            post=extend_schema(
                request=PublishSerializer,
                responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT},
                summary=cls.publishing,
            ),
            delete=extend_schema(
                request=None, responses={204: None}, summary=f"Stop sharing the {cls.what}"
            ),
        )(cls)

    def owned(self, request, pk: int, *, whole: bool = False):
        raise NotImplementedError

    def get(self, request, pk: int):
        link_of, _, _ = CALLS[self.keyword]
        link = link_of(**{self.keyword: self.owned(request, pk)})
        return Response({"link": selectors.link_json(link)})

    @refuses(NothingToExport, Limit.DRAWING, UploadProblem.UPLOADS_FULL)
    def post(self, request, pk: int):
        _, publish, _ = CALLS[self.keyword]
        options = _options(request)
        shared = self.owned(request, pk, whole=True)
        return _published(*publish(**{self.keyword: shared}, options=options))

    def delete(self, request, pk: int):
        _, _, stop_sharing = CALLS[self.keyword]
        stop_sharing(**{self.keyword: self.owned(request, pk)})
        return Response(status=status.HTTP_204_NO_CONTENT)


class PublishComicView(_Publishing):
    what, keyword = "comic", "storyboard"
    publishing = "Publish the comic as it is now (again: the same link, the current version)"

    def owned(self, request, pk: int, *, whole: bool = False):
        return owned_storyboard(request, pk, with_parts=whole)


class PublishSeriesView(_Publishing):
    what, keyword = "series", "series"
    publishing = "Publish the series' drawn chapters, in order, as they are now"

    def owned(self, request, pk: int, *, whole: bool = False):
        return owned_series(request, pk)
