"""URLs of tests/test_rest_framework.py: DRF views over a DynamoDB model."""

from django.http import Http404
from django.urls import path
from rest_framework import generics

from dynamo_app.contrib.rest_framework import CursorPagination, ModelSerializer
from dynamo_app.exceptions import DoesNotExist
from tests.drf_support import Member


class MemberSerializer(ModelSerializer):
    class Meta:
        model = Member
        fields = "__all__"


class Pages(CursorPagination):
    page_size = 2


class MemberList(generics.ListCreateAPIView):
    serializer_class = MemberSerializer
    pagination_class = Pages

    def get_queryset(self):
        return Member.objects.filter(club=self.kwargs["club"])


class MemberDetail(generics.RetrieveUpdateAPIView):
    serializer_class = MemberSerializer

    def get_object(self):
        try:
            return Member.objects.get(club=self.kwargs["club"], member_id=self.kwargs["pk"])
        except DoesNotExist:
            raise Http404 from None


urlpatterns = [
    path("clubs/<club>/members/", MemberList.as_view()),
    path("clubs/<club>/members/<pk>/", MemberDetail.as_view()),
]
