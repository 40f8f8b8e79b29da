"""Tests of the archive: WARC records, the index, WACZ, importing other tools' archives, snapshots."""
