"""The project's own routes; /mcp is mounted in wsgi.py, in front of Django."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.index),
    path("health", views.health),
]
