"""WACZ: building one from a snapshot, exporting it, and reading one that another tool wrote."""
