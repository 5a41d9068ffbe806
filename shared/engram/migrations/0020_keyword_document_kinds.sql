-- A keyword document is the row of one kind it was made from: an event and a fact (or an entity) may share an
-- id, and keyed by id alone, writing one replaced the other in the index (issue 17). Keyed by kind as well.
ALTER TABLE keyword_documents DROP CONSTRAINT keyword_documents_pkey;
ALTER TABLE keyword_documents ADD PRIMARY KEY (world_id, kind, doc_id);
