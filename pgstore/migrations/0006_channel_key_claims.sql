-- Claims with a lease on the channel dedupe sets: a key claimed before its
-- event is handed over holds until claimed_until, renewed while its holder
-- lives, so a gateway killed in between does not keep the event forever.
-- claimed_until NULL is a handled key (every row before this migration).
-- holder names the gateway across its restarts, run the process that claimed.
ALTER TABLE channel_keys
    ADD COLUMN holder        text,
    ADD COLUMN run           text,
    ADD COLUMN claimed_until timestamptz;
