-- nanobot's state in PostgreSQL, for deployments that outgrow one disk. One
-- database holds one nanobot (one workspace); the JSONL files stay the
-- default for one host.

-- Sessions: the conversation and each turn's journal.
CREATE TABLE sessions (
    key               text PRIMARY KEY,
    kind              text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    -- modified_at moves on every write, appends included (the file's mtime).
    modified_at       timestamptz NOT NULL,
    metadata          json NOT NULL DEFAULT '{}',
    last_consolidated integer NOT NULL DEFAULT 0
);
CREATE INDEX sessions_kind ON sessions (kind);

-- One row per message, in seq order (gaps allowed); body is the JSONL line.
CREATE TABLE session_messages (
    session_key text NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
    seq         integer NOT NULL,
    turn        text NOT NULL DEFAULT '',
    entry_id    text NOT NULL DEFAULT '',
    body        json NOT NULL,
    PRIMARY KEY (session_key, seq)
);
-- A retried step writes its entry once: (turn, entry id) is unique per session.
CREATE UNIQUE INDEX session_messages_entry ON session_messages (session_key, turn, entry_id) WHERE entry_id <> '';

-- A side-effecting step claims its entry before it acts, on any host.
CREATE TABLE session_claims (
    session_key text NOT NULL,
    turn        text NOT NULL,
    entry_id    text NOT NULL,
    claimed_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (session_key, turn, entry_id)
);

-- Per-turn blobs (the built system prompt), so every retry reads the same bytes.
CREATE TABLE session_turn_data (
    session_key text NOT NULL,
    turn        text NOT NULL,
    name        text NOT NULL,
    data        bytea NOT NULL,
    written_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (session_key, turn, name)
);

-- Token usage, one row per model call: a retried call is counted once.
CREATE TABLE usage_calls (
    id                bigserial UNIQUE,
    session_key       text NOT NULL,
    turn              text NOT NULL,
    call              text NOT NULL,
    at                timestamptz NOT NULL,
    model             text NOT NULL DEFAULT '',
    provider          text NOT NULL DEFAULT '',
    prompt_tokens     integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    cached_tokens     integer NOT NULL DEFAULT 0,
    estimated         boolean NOT NULL DEFAULT false,
    kind              text NOT NULL DEFAULT '',
    PRIMARY KEY (session_key, turn, call)
);
CREATE INDEX usage_calls_at ON usage_calls (at);

-- Pairing: pending codes and the senders they let in.
CREATE TABLE pairing_pending (
    code       text PRIMARY KEY,
    position   integer NOT NULL,
    channel    text NOT NULL,
    sender_id  text NOT NULL,
    chat_id    text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE TABLE pairing_approved (
    position    integer NOT NULL,
    channel     text NOT NULL,
    sender_id   text NOT NULL,
    approved_at timestamptz NOT NULL,
    PRIMARY KEY (channel, sender_id)
);

-- memory/history.jsonl: the archive of consolidated conversation, by cursor.
CREATE TABLE memory_history (
    cursor_no   integer PRIMARY KEY,
    entry_id    text NOT NULL DEFAULT '',
    stamp       text NOT NULL DEFAULT '',
    content     text NOT NULL,
    session_key text NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX memory_history_entry ON memory_history (entry_id) WHERE entry_id <> '';
-- memory/.dream_cursor: one row, moved by compare-and-set.
CREATE TABLE memory_state (
    id           boolean PRIMARY KEY DEFAULT true CHECK (id),
    dream_cursor integer NOT NULL DEFAULT 0
);
INSERT INTO memory_state DEFAULT VALUES;

-- Channel dedupe sets (update ids, event ids): the newest keys of each set.
CREATE TABLE channel_keys (
    set_name text NOT NULL,
    key      text NOT NULL,
    seq      bigserial,
    PRIMARY KEY (set_name, key)
);
CREATE INDEX channel_keys_order ON channel_keys (set_name, seq);
