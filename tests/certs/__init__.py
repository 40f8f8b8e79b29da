"""Tests of the certificates: the local servers' per-host leaves and the snapshot proxy's own CA."""
