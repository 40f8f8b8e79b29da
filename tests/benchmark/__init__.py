"""The benchmark of real applications: builders, their data and the frozen benchmark."""
