-- Prompt tokens written to the provider's cache (Anthropic bills them at 1.25x).
ALTER TABLE usage_calls ADD COLUMN cache_write_tokens integer NOT NULL DEFAULT 0;
