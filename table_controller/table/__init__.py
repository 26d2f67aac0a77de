"""The table edge: the reader layout, the deck files and card presence (what each antenna holds)."""
