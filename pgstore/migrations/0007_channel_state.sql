-- The channels' small state shared by every gateway of an instance: Matrix's
-- sync token, WeChat's per-user context tokens. One row per instance,
-- channel and key; the last writer wins.
CREATE TABLE channel_state (
    instance   text        NOT NULL,
    channel    text        NOT NULL,
    key        text        NOT NULL,
    value      text        NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance, channel, key)
);
