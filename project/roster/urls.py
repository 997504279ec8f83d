from django.urls import path

from . import views

app_name = "roster"
urlpatterns = [
    path("", views.team_list, name="teams"),
    path("teams/new/", views.team_create, name="team_create"),
    path("teams/sample/", views.sample_teams, name="sample"),
    path("teams/<slug:team_id>/", views.team_detail, name="team"),
    path("teams/<slug:team_id>/history/", views.team_history, name="history"),
    path("teams/<slug:team_id>/players/new/", views.player_add, name="player_add"),
    path("teams/<slug:team_id>/players/<str:player_id>/", views.player_edit, name="player_edit"),
    path(
        "teams/<slug:team_id>/players/<str:player_id>/delete/",
        views.player_delete,
        name="player_delete",
    ),
]
