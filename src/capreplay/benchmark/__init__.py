"""The benchmark of real web applications: how each is installed, filled, started, frozen and run.

Each application is one nobody on the project wrote, installed from Debian's packages, PyPI or npm at a pinned
version and filled with real data that ships in packages (:mod:`.apps`, one builder per application, named in
:mod:`.roster`). The benchmark's data (capture plans, the frozen snapshot, tasks, registration and proof
report) lives in the repository's ``benchmark/`` folder.
"""
