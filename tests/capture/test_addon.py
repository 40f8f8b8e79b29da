"""Which hosts a capture may reach."""

from capreplay.capture.addon import HostPolicy, decide


def test_background_hosts_are_always_blocked() -> None:
    for host in ["accounts.google.com", "update.googleapis.com", "clients2.google.com", "redirector.gvt1.com"]:
        assert decide(host, HostPolicy()) == "block"


def test_mapped_hosts_go_to_their_origin_and_others_follow_the_policy() -> None:
    policy = HostPolicy(maps={"shop.test": ("127.0.0.1", 1)}, only_mapped=True)
    assert decide("Shop.Test.", policy) == "map"
    assert decide("example.com", policy) == "block"
    assert decide("example.com", HostPolicy()) == "connect"
