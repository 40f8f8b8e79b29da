"""The ready responses' hash table is laid out as open addressing with linear probing lays it out.

Slots are hand-made to collide (keys whose low bits agree), to wrap around the table's end, and to repeat a
key; the table's bytes must equal those of the plain algorithm written out here (each slot at the first free
place from its key's bucket, a place being free while its 16 key bytes are zero), and a few places are
checked by value.
"""

from __future__ import annotations

from capreplay.replay.ready.builder import Slot, _table
from capreplay.replay.ready.responses import EMPTY, HEADER, HEADER_BYTES, SLOT


def _key(bucket: int, tag: int) -> bytes:
    """A 16-byte key whose first 8 bytes (little-endian) fall in ``bucket`` of a small table."""
    return (bucket + (tag << 20)).to_bytes(8, "little") + tag.to_bytes(8, "little")


def _reference(slots: list[Slot], size: int, parts: int) -> bytes:
    table = bytearray(HEADER_BYTES + size * SLOT.size)
    # format 2: event streams are never made ready (they are sent event by event)
    HEADER.pack_into(table, 0, b"CAPREADY", 2, parts, size)
    for slot in slots:
        at = int.from_bytes(slot[0][:8], "little") % size
        while table[HEADER_BYTES + at * SLOT.size : HEADER_BYTES + at * SLOT.size + 16] != EMPTY:
            at = (at + 1) % size
        SLOT.pack_into(table, HEADER_BYTES + at * SLOT.size, *slot)
    return bytes(table)


def test_colliding_and_wrapping_slots_are_placed_by_linear_probing() -> None:
    size = 16
    slots: list[Slot] = [
        (_key(3, 1), 0, 10, 5, -1, 200, 0),
        (_key(3, 2), 10, 10, 5, -1, 200, 0),  # same bucket: the next place
        (_key(4, 3), 20, 10, 5, 3, 404, 1),  # its bucket taken by the one before: one further
        (_key(15, 4), 30, 10, 5, -1, 200, 0),
        (_key(15, 5), 40, 10, 5, -1, 200, 1),  # wraps to place 0
        (_key(3, 1), 50, 10, 5, -1, 200, 0),  # a repeated key takes a place of its own
    ]
    made = _table(slots, size, 2)
    assert made == _reference(slots, size, 2)

    def place(n: int) -> tuple[object, ...]:
        return SLOT.unpack_from(made, HEADER_BYTES + n * SLOT.size)

    assert [place(n)[1] for n in (3, 4, 5, 15, 0, 6)] == [0, 10, 20, 30, 40, 50]
    assert place(1)[0] == EMPTY and place(7)[0] == EMPTY


def test_an_all_zero_key_leaves_its_place_free_as_before() -> None:
    slots: list[Slot] = [(EMPTY, 0, 1, 1, -1, 200, 0), (_key(0, 9), 5, 1, 1, -1, 200, 0)]
    made = _table(slots, 8, 1)
    assert made == _reference(slots, 8, 1)
    assert SLOT.unpack_from(made, HEADER_BYTES)[1] == 5  # written over the key that reads as empty
