"""capreplay: freeze web pages into WARC snapshots and replay them offline."""
