"""HAR 1.2 both ways: a HAR's entries become WARC records for ``capreplay import``, a snapshot becomes a HAR."""
