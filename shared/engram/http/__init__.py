"""The HTTP API: Powertools resolvers, routes, error bodies and authorization."""
