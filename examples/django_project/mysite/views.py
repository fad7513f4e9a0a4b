"""Ordinary Django views, answering next to the MCP endpoint."""

from django.http import HttpRequest, HttpResponse, JsonResponse


def index(request: HttpRequest) -> HttpResponse:
    return HttpResponse("The Django site's own home page.")


def health(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})
