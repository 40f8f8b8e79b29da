"""Real applications installed from their packages, captured and replayed offline (WebSocket, events, POST)."""
