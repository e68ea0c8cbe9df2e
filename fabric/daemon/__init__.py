"""``fabricctl run``: the long-running service, one asyncio loop serving the HTTP API and scheduling the cycles.

One module a job: ``process`` (start-up, its refusals, the loop, the signals), ``runtime`` (the engine as the API
sees it: its last cycle, the guard's figures), ``jobs`` (the scheduler), ``app`` (the FastAPI app and its own
endpoints), ``metrics`` (Prometheus), ``logs`` (JSON lines, the cycle id on each), ``lock`` (one daemon per
SQLite database), ``clock`` (the wall clock, or the simulator's for the demo and tests).
"""
