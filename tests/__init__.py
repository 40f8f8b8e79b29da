"""capreplay's tests: one package per part of the project; helpers shared between test modules live in tests/support."""
