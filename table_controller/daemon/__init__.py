"""The table controller daemon: readers in, engine in the middle, MQTT out.

``core`` is the single-threaded heart (presence, journal, engine, publishing);
``projection`` turns engine state into payloads; ``runner`` wires threads,
signals, serial links and the MQTT client around it.
"""
