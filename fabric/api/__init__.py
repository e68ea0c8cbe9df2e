"""The service's HTTP API (FastAPI, ``/api/v1``): read endpoints, host health, operator writes and webhooks."""
