"""The table controller's unit and integration tests, one folder per layer of the
package (``domain``, ``table``, ``records``, ``mqtt``, ``simulation``, ``cli``).

The helpers they share (``mqtt_samples``, ``stud_script``, ``equity_reference``) stay in
this folder: pytest puts a conftest's folder on ``sys.path``, so ``import mqtt_samples``
works from every layer's tests.
"""
