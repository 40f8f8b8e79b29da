"""The index of a snapshot: canonical URL keys, the CDXJ file, and lookups in it."""
