"""WARC records: building them from exchanges, appending them, reading them back, and the HTTP messages they hold."""
