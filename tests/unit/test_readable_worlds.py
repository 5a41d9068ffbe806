"""Which worlds a caller may read (what `GET /v1/worlds` lists): a key's or a token's worlds, or every world."""

from __future__ import annotations

import pytest

from engram.errors import Unauthorized
from engram.http.auth import parse_api_keys, readable_worlds

KEYS = parse_api_keys("k1=wa,wb;admin=*")


def test_a_key_reads_the_worlds_it_names_and_a_star_key_or_no_auth_reads_every_world() -> None:
    assert readable_worlds({"authorization": "Bearer k1"}, None, KEYS) == {"wa", "wb"}
    assert readable_worlds({"authorization": "Bearer admin"}, None, KEYS) is None
    assert readable_worlds({}, None, {}) is None


def test_a_token_reads_the_worlds_of_its_claim_whatever_keys_are_configured() -> None:
    assert readable_worlds({}, {"engram:worlds": ["wc"]}, KEYS) == {"wc"}
    assert readable_worlds({}, {"custom:worlds": "*"}, {}) is None
    assert readable_worlds({}, {}, {}) == set()


def test_a_missing_or_unknown_key_reads_nothing() -> None:
    for headers in ({}, {"authorization": "Bearer nope"}, {"authorization": "k1"}):
        with pytest.raises(Unauthorized):
            readable_worlds(headers, None, KEYS)
