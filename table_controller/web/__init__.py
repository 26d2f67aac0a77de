"""What the web services (broadcast pages, floor dashboard) share: passwords, inbound messages."""
