"""One builder per application: each module defines ``APP``, an
:class:`~capreplay.benchmark.application.Application`."""
