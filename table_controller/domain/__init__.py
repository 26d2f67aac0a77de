"""The pure domain: cards, zones, events, hands, game variants, the rules engine, equity.

Nothing here does I/O or reads a clock (issue 10): every input is a value and
every output is returned.
"""
