"""PostgreSQL adapter: the system of record (psycopg 3 pool, pgvector, pg_trgm)."""
