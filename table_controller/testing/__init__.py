"""Fakes and rigs shared by the tests and the benchmarks (a real broker, the daemon rig, a browser).

Not used by the product at run time; importing some of it needs the dev extras (PokerKit)."""
