"""Reader side of the table: wire protocol, sans-I/O decoder, serial link, emulator."""
