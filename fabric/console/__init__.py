"""The operator's console: HTML pages served by the daemon's API process (``GET /``, ``/ui/...``).

Server-rendered from the API's own answers (``fabric.api``), with the fabric's picture drawn by
``topology.picture``; logins, CSRF-checked forms and the writes they make go through ``actions``.
"""
