"""URLs of the demo project: the roster, Django's admin, its login and logout."""

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from project.roster import views as roster_views

urlpatterns = [
    path("", include("project.roster.urls")),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/signup/", roster_views.signup, name="signup"),
]
if "debug_toolbar" in settings.INSTALLED_APPS:  # development, with the [debug-toolbar] extra
    from debug_toolbar.toolbar import debug_toolbar_urls

    urlpatterns += debug_toolbar_urls()
