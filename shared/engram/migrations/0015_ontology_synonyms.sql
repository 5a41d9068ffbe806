-- A predicate of the world's ontology may declare the other words for it ("resides_in", "home_city" for
-- lives_in): an extracted predicate that is one of them is recorded as the ontology's.
ALTER TABLE domain_ontology ADD COLUMN synonyms text[] NOT NULL DEFAULT '{}';
