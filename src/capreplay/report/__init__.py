"""Reports of study runs: tables and plots built from a run folder's records (``capreplay report``)."""
