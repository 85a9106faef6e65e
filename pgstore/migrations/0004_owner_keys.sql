-- The owner key of each instance (gateway.instance): the HMAC key of the
-- seals on admitted messages and the proofs on approval answers, so every
-- host verifies what any other made. The first host's key wins.
CREATE TABLE owner_keys (
    instance   text PRIMARY KEY,
    key        bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
