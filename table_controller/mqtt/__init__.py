"""The MQTT side: topics, payload models, the publisher, the sequence counter, console commands."""
