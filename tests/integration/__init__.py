"""End-to-end tests: capture then replay, every CLI verb, offline replay, interoperability with pywb."""
