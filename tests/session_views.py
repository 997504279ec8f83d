"""Views for the session end-to-end tests (also the URLconf of the no-database
project in ``tests/nodb_settings.py``)."""

from __future__ import annotations

from django.contrib.auth import authenticate, login, logout
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path

from dynamo_app.sessions import SessionStore


def login_view(request: HttpRequest) -> HttpResponse:
    user = authenticate(
        request, username=request.POST.get("username"), password=request.POST.get("password")
    )
    if user is None:
        return JsonResponse({"user": None}, status=403)
    login(request, user)
    return JsonResponse({"user": user.get_username()})


def whoami(request: HttpRequest) -> HttpResponse:
    """Reads the session (through request.user), never writes it."""
    user = request.user  # type: ignore[attr-defined]
    return JsonResponse({"user": user.get_username() if user.is_authenticated else None})


def count(request: HttpRequest) -> HttpResponse:
    request.session["count"] = request.session.get("count", 0) + 1
    return JsonResponse({"count": request.session["count"]})


async def acount(request: HttpRequest) -> HttpResponse:
    n = await request.session.aget("count", 0) + 1
    await request.session.aset("count", n)
    return JsonResponse({"count": n})


def peek(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"count": request.session.get("count")})


def logout_view(request: HttpRequest) -> HttpResponse:
    logout(request)
    return JsonResponse({"user": None})


def ended_elsewhere(request: HttpRequest) -> HttpResponse:
    """The session is deleted (a logout in another tab) while this request,
    having read it, changes it."""
    request.session.get("count")
    SessionStore(request.session.session_key).delete()
    request.session["late"] = True
    return JsonResponse({"ok": True})


urlpatterns = [
    path("login/", login_view),
    path("whoami/", whoami),
    path("count/", count),
    path("acount/", acount),
    path("peek/", peek),
    path("logout/", logout_view),
    path("ended-elsewhere/", ended_elsewhere),
]
