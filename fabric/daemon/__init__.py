"""``fabricctl run``: the remediation daemon (the scheduler, the engine's cycles, the HTTP API, signals)."""
