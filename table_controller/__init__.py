"""Table side: cards, zones, rules engine, presence tracking, daemon and CLI."""
