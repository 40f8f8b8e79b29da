"""``capreplay import``: a snapshot built from the WARC and WACZ files other tools wrote."""
