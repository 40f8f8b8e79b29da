"""The strace parser that proves nothing leaves the machine: real-shaped lines, both verdicts."""

from tests.support.strace import is_local, off_machine_packets


def test_loopback_tcp_is_fine_and_a_remote_tcp_connect_is_a_packet() -> None:
    lines = [
        '100 socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, IPPROTO_IP) = 40',
        '100 connect(40, {sa_family=AF_INET, sin_port=htons(8443), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 '
        "EINPROGRESS (Operation now in progress)",
        '100 socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, IPPROTO_IP) = 41',
        '100 connect(41, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("93.184.216.34")}, 16) = -1 '
        "EINPROGRESS (Operation now in progress)",
    ]
    found = off_machine_packets(lines)
    assert [(p.address, p.port) for p in found] == [("93.184.216.34", 443)]


def test_dns_probe_sendto_null_on_a_connected_udp_socket_is_caught() -> None:
    lines = [
        "200 socket(AF_INET, SOCK_DGRAM|SOCK_CLOEXEC|SOCK_NONBLOCK, IPPROTO_IP) = 33",
        '200 connect(33, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.2")}, 16) = 0',
        '200 sendto(33, "\\x12\\x34\\x01\\x00", 4, MSG_NOSIGNAL, NULL, 0) = 4',
    ]
    found = off_machine_packets(lines)
    assert len(found) == 1 and found[0].syscall == "sendto" and found[0].port == 53


def test_udp_route_probe_without_a_send_sends_nothing() -> None:
    lines = [
        "300 socket(AF_INET6, SOCK_DGRAM|SOCK_CLOEXEC, IPPROTO_IP) = 20",
        "300 connect(20, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), "
        'inet_pton(AF_INET6, "2001:4860:4860::8888", &sin6_addr), sin6_scope_id=0}, 28) = 0',
        "300 close(20) = 0",
        "300 socket(AF_UNIX, SOCK_DGRAM|SOCK_CLOEXEC, 0) = 20",
        '300 sendto(20, "x", 1, 0, NULL, 0) = 1',
    ]
    assert off_machine_packets(lines) == []


def test_descriptors_are_per_process_but_shared_by_threads() -> None:
    lines = [
        "400 socket(AF_INET, SOCK_DGRAM, IPPROTO_IP) = 7",
        '400 connect(7, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("192.0.2.1")}, 16) = 0',
        "400 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, "
        "exit_signal=0}, 88) = 401",
        "400 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD) = 500",
        '500 sendto(7, "x", 1, 0, NULL, 0) = 1',  # another process's fd 7: not the connected one
        '401 sendto(7, "x", 1, 0, NULL, 0 <unfinished ...>',
        "401 <... sendto resumed>) = 1",  # a thread of 400: its fd 7 is the connected socket
    ]
    found = off_machine_packets(lines)
    assert [(p.pid, p.address) for p in found] == [(401, "192.0.2.1")]


def test_sendmsg_with_an_explicit_remote_address() -> None:
    line = ('600 sendmsg(9, {msg_name={sa_family=AF_INET, sin_port=htons(5353), sin_addr=inet_addr("224.0.0.251")}, '
            'msg_namelen=16, msg_iov=[{iov_base="x", iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 1')
    assert [p.address for p in off_machine_packets([line])] == ["224.0.0.251"]


def test_is_local() -> None:
    assert is_local("127.0.0.1") and is_local("127.8.9.10") and is_local("::1") and is_local("::ffff:127.0.0.1")
    assert is_local("0.0.0.0")
    assert not is_local("10.0.0.1") and not is_local("2001:db8::1") and not is_local("not-an-ip")


def test_an_interrupted_close_counts_where_it_started() -> None:
    lines = [
        "7 clone3({flags=CLONE_VM|CLONE_FILES|CLONE_THREAD}, 88) = 8",  # 8 is a thread of 7: one descriptor table
        "7 close(23 <unfinished ...>",
        "8 socket(AF_INET6, SOCK_DGRAM, IPPROTO_IP) = 23",
        "7 <... close resumed>)              = 0",
        "8 connect(23, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "
        '"2001:4860:4860::8888", &sin6_addr), sin6_scope_id=0}, 28) = 0',
    ]
    # Taken where it ended, the close would forget the UDP socket, and its connect would look like TCP.
    assert off_machine_packets(lines) == []


def test_an_interrupted_call_other_than_close_is_joined_where_it_ends() -> None:
    lines = [
        '7 sendto(5, "x", 1, 0, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("8.8.8.8")}, 16 '
        "<unfinished ...>",
        "8 socket(AF_INET, SOCK_STREAM, IPPROTO_TCP) = 6",
        "7 <... sendto resumed>) = 1",
    ]
    assert [(p.address, p.port) for p in off_machine_packets(lines)] == [("8.8.8.8", 53)]
