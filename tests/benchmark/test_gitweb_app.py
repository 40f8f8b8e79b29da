"""gitweb's configuration: the features the benchmark needs on, the ones that would call out or vary off."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from capreplay.benchmark.apps.gitweb_app import clock_module, gitweb_config


def test_config_names_the_site_and_switches_features() -> None:
    config = gitweb_config(Path("/w/repositories"), "http://code.bench.test", Path("/w/tmp"))
    assert '$projectroot = "/w/repositories";' in config
    assert '$site_name = "Pallets source";' in config
    assert '$my_url = "http://code.bench.test/";' in config
    for on in ("blame", "search", "grep", "pickaxe"):
        assert f"$feature{{'{on}'}}{{'default'}} = [1];" in config
    assert "$feature{'avatar'}{'default'} = [''];" in config
    assert "$feature{'snapshot'}{'default'} = [];" in config
    assert "$feature{'javascript-timezone'}{'default'} = [undef];" in config
    assert config.rstrip().endswith("1;")


def test_clock_is_fixed_at_the_given_moment() -> None:
    # 2024-05-06 12:00 UTC, a day after Jinja 3.1.4, the newest release
    module = clock_module(datetime(2024, 5, 6, 12, tzinfo=UTC))
    assert "sub () { 1714996800 }" in module
