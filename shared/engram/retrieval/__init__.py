"""Retrieval: the three brains (keyword, semantic, graph), their fusion, and conversation context."""
