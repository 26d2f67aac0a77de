"""The broadcast service: delayed hole-card feed and overlay / venue / producer pages (issue 12).

* :mod:`.delay`: the pure delay line and reveal filter (no clock, no I/O);
* :mod:`.store`: the on-disk backlog (SQLite) that survives ``kill -9``;
* :mod:`.config`: ``broadcast.toml`` (pydantic);
* :mod:`.service`: MQTT follower + HTTP/SSE server (``stud-table broadcast``).
"""
