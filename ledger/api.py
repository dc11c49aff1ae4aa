"""The credits endpoints: balance with open holds, and the paginated history."""

from drf_spectacular.utils import extend_schema
from rest_framework.generics import ListAPIView
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from . import selectors, services
from .serializers import CreditsSerializer, TransferSerializer


class CreditsView(APIView):
    @extend_schema(responses=CreditsSerializer, summary="Balance and open holds")
    def get(self, request):
        account = services.account_for(request.user)
        data = {
            "available": account.available,
            "held": account.held,
            "holds": selectors.open_holds(account=account),
        }
        return Response(CreditsSerializer(data).data)


class TransferPagination(PageNumberPagination):
    page_size = 25
    page_size_query_param = "page_size"
    max_page_size = 200


class TransfersView(ListAPIView):
    serializer_class = TransferSerializer
    pagination_class = TransferPagination

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        self.account = services.account_for(request.user)

    def get_queryset(self):
        return selectors.transfers_for(account=self.account)

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "account": self.account}
