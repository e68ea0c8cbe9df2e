"""UFM Telemetry as a signal source: the numeric core, pure (bytes and arrays in, records out, no clock, no I/O
but the files it is asked to read).

UFM Telemetry serves one CSV row per port per sample, cumulative counters by column name (the secondary instance
NVIDIA's PDR plugin reads). ``parse`` reads a sample columnar (``Sample``), ``window`` keeps the per-port history
a sample is judged against (reset-aware deltas, BER windows in bounded memory), ``evaluate`` turns a sample into
``TelemetryCondition`` records behind the stale / partial / implausible gate (``SampleVerdict``), ``recorded``
reads a directory of recorded samples in time order for replay.

numpy and pyarrow are imported by the modules that compute (``body``, ``parse``, ``window``, ``evaluate``...),
never by this package or by ``columns``, ``settings`` and ``records``: a command that does not read telemetry
does not pay their import (a quarter of a second and some 90 MiB of shared libraries).
"""
