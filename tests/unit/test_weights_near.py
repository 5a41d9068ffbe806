"""The graph brain's weights from each seed's own walk (read with its name) are the weights of the walk from all
the seeds together, whatever the seeds and however the walks were cut; too many seeds for the slack walk anew."""

from __future__ import annotations

import random

from engram.model.heuristics import DEFAULT_HEURISTICS
from engram.retrieval.graph import NEAR_SLACK, weights_near

H = DEFAULT_HEURISTICS.with_overrides({"graph_max_entities": 4, "graph_depth": 2})


def _walk(edges: set[tuple[str, str]], seeds: list[str], depth: int) -> dict[str, int]:
    """Fewest hops from any seed, within `depth`, either direction (as the store's recursive walk)."""
    hops = dict.fromkeys(seeds, 0)
    frontier = set(seeds)
    for hop in range(1, depth + 1):
        frontier = {b for a, c in edges for x, b in ((a, c), (c, a)) if x in frontier} - set(hops)
        hops.update(dict.fromkeys(frontier, hop))
    return hops


def _expected(edges: set[tuple[str, str]], seeds: list[str]) -> dict[str, float]:
    hops = _walk(edges, seeds, H.retrieval.graph_depth)
    reached = sorted((e for e in hops if e not in seeds), key=lambda e: (hops[e], e))[: H.retrieval.graph_max_entities]
    return {**dict.fromkeys(seeds, 1.0), **{e: H.retrieval.graph_hop_decay ** hops[e] for e in reached}}


def _near(edges: set[tuple[str, str]], seed: str, limit: int) -> list[tuple[str, int]]:
    hops = _walk(edges, [seed], H.retrieval.graph_depth)
    return sorted(((e, n) for e, n in hops.items() if e != seed), key=lambda x: (x[1], x[0]))[:limit]


def test_the_weights_from_each_seeds_walk_are_the_walk_from_all_the_seeds() -> None:
    rng = random.Random(7)
    for _ in range(300):
        nodes = [f"e{i}" for i in range(rng.randint(2, 30))]
        edges = {(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.randint(0, 60))}
        seeds = rng.sample(nodes, rng.randint(1, min(5, len(nodes))))
        limit = rng.choice([H.retrieval.graph_max_entities + NEAR_SLACK, H.retrieval.graph_max_entities + len(seeds) - 1])
        near = {s: _near(edges, s, limit) for s in seeds}
        assert weights_near(seeds, near, H) == _expected(edges, seeds)


def test_a_seed_not_walked_or_too_many_seeds_for_the_slack_ask_for_a_walk() -> None:
    assert weights_near(["a", "b"], {"a": [("c", 1)]}, H) is None  # b's walk was not read
    many = [f"s{i}" for i in range(NEAR_SLACK + 2)]
    full = [(f"x{i}", 1) for i in range(H.retrieval.graph_max_entities + NEAR_SLACK)]
    assert weights_near(many, dict.fromkeys(many, full), H) is None
    assert weights_near(many, dict.fromkeys(many, full[:3]), H) is not None  # no walk was cut: nothing was missed
    assert weights_near([], {}, H) == {}
