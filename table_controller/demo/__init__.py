"""``stud-table demo``: a simulated table dealt live through the real daemon.

``broker`` runs a private mosquitto, ``session`` starts broker, emulated
readers and the daemon process together, ``dealer`` deals random clean hands
through the readers, ``feed`` and ``view`` show the table from its public
MQTT topics, ``broadcast`` runs the broadcast service beside them
(``--broadcast``), and ``app`` ties them into :func:`run_demo`.
"""

from table_controller.demo.app import run_demo

__all__ = ["run_demo"]
