"""The keys of ``requestState``: a ring whose current key signs and whose accepted keys
still verify, rotated in stages across workers without refusing a state in flight, a
retired key's states refused as such, the ring read from the environment with errors
naming the variable, and garbage states refused without harm."""

from __future__ import annotations


import pytest

from mcpgen.runtime.core.request_state import KeyRing, StateError, StateSigner, key_id

#: Fixed keys: test ids name them, and every pytest-xdist worker must collect the same.
OLD, NEW, OTHER = (bytes([n]) * 32 for n in (1, 2, 3))
METHOD, DIGEST = "tools/call", "d" * 32
ANSWERS = {"name": {"action": "accept", "content": {"name": "Ada"}}}


def signed_by(ring: KeyRing) -> str:
    return StateSigner(ring).sign(METHOD, DIGEST, ANSWERS)


def verified_by(ring: KeyRing, state: str) -> dict[str, object]:
    return StateSigner(ring).verify(state, METHOD, DIGEST)


def test_a_rotation_in_stages_refuses_no_state_in_flight() -> None:
    """Two workers rotate from OLD to NEW: at every stage each verifies what the other
    signs; once OLD is dropped everywhere its states are refused as retired."""
    # stage 0: both on OLD
    a = b = KeyRing(OLD)
    assert verified_by(b, signed_by(a)) == ANSWERS
    # stage 1: NEW accepted everywhere (worker a first, b later), OLD still signs
    a = KeyRing(OLD, (NEW,))
    assert verified_by(b, signed_by(a)) == ANSWERS and verified_by(a, signed_by(b)) == ANSWERS
    b = KeyRing(OLD, (NEW,))
    # stage 2: NEW signs, OLD accepted (a switches before b: both still agree)
    in_flight = signed_by(b)  # issued by OLD, answered after the switch
    a = KeyRing(NEW, (OLD,))
    assert verified_by(b, signed_by(a)) == ANSWERS and verified_by(a, signed_by(b)) == ANSWERS
    b = KeyRing(NEW, (OLD,))
    assert verified_by(a, in_flight) == ANSWERS and verified_by(b, in_flight) == ANSWERS
    # stage 3: OLD retired
    a = b = KeyRing(NEW)
    assert verified_by(b, signed_by(a)) == ANSWERS
    with pytest.raises(StateError) as refused:
        verified_by(a, in_flight)
    assert "does not hold" in refused.value.message
    assert refused.value.data == {"path": "$.params.requestState"}


def test_a_state_names_its_key_by_an_id_that_reveals_nothing_of_it() -> None:
    state = signed_by(KeyRing(NEW, (OLD,)))
    kid = state.split(".")[0]
    assert kid == key_id(NEW) and kid != key_id(OLD) and len(kid) == 8
    assert NEW.hex() not in state and kid.encode() not in NEW


@pytest.mark.parametrize(
    ("state", "why"),
    [
        ("", "malformed"),
        ("a.b", "malformed"),
        ("a.b.c.d", "malformed"),
        ("!!!.***.###", "does not hold"),
        (f"{key_id(NEW)}.@@@.AAAA", "bad signature"),
        (f"{key_id(NEW)}.e30.AAAA", "bad signature"),
        ("x" * 10_000, "malformed"),
    ],
)
def test_garbage_is_refused_with_a_reason_and_a_good_state_still_verifies(
    state: str, why: str
) -> None:
    ring = KeyRing(NEW)
    with pytest.raises(StateError) as refused:
        verified_by(ring, state)
    assert why in refused.value.message
    assert verified_by(ring, signed_by(ring)) == ANSWERS


def test_the_ring_comes_from_the_environment() -> None:
    env = {
        "MCPGEN_STATE_KEY": NEW.hex(),
        "MCPGEN_STATE_KEYS_ACCEPTED": f"{OLD.hex()}, {OTHER.hex()}",
    }
    ring = KeyRing.from_environment(env)
    assert ring == KeyRing(NEW, (OLD, OTHER))
    assert KeyRing.from_environment({}) is None
    assert KeyRing.of(None, env) == ring
    assert KeyRing.of(OLD) == KeyRing(OLD)
    assert KeyRing.of(ring) is ring
    assert len(KeyRing.of(None, {}).current) == 32  # a random key of the process's own


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MCPGEN_STATE_KEY": "not hex"}, "MCPGEN_STATE_KEY must be hex"),
        ({"MCPGEN_STATE_KEY": "abcd"}, "MCPGEN_STATE_KEY must hold at least 16 bytes"),
        (
            {"MCPGEN_STATE_KEY": NEW.hex(), "MCPGEN_STATE_KEYS_ACCEPTED": "zz"},
            "MCPGEN_STATE_KEYS_ACCEPTED must be hex",
        ),
        ({"MCPGEN_STATE_KEYS_ACCEPTED": OLD.hex()}, "MCPGEN_STATE_KEY is not"),
    ],
)
def test_a_bad_environment_is_an_error_naming_the_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(ValueError) as refused:
        KeyRing.from_environment(env)
    assert named in str(refused.value)


def test_a_key_too_short_is_refused() -> None:
    with pytest.raises(ValueError):
        KeyRing(b"short")
    with pytest.raises(ValueError):
        KeyRing(NEW, (b"short",))
