-- The session tools search what was said (search_sessions): a trigram index
-- on the lower-cased text of user and assistant messages serves their
-- case-insensitive substring match. A JSON string holding \u0000 has no text
-- form in PostgreSQL, so such a row is left out (the CASEs keep it from
-- failing the insert). pg_trgm ships with PostgreSQL's contrib; where it is
-- missing the search still works, by a scan.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
        CREATE INDEX IF NOT EXISTS session_messages_text ON session_messages
            USING gin ((CASE WHEN strpos(body::text, '\u0000') = 0 THEN lower(body->>'content') END) gin_trgm_ops)
            WHERE (CASE WHEN strpos(body::text, '\u0000') = 0 THEN body->>'role' IN ('user', 'assistant') ELSE false END);
    END IF;
END
$$;
