from django.urls import include, path

urlpatterns: list = [
    path("sessions/", include("tests.session_views")),
]
