"""Records of play: table scripts, the operations they share with the console, the journal."""
