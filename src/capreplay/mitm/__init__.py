"""mitmproxy in capreplay's own event loop: the one place it starts, for the capture and the snapshot proxy."""
