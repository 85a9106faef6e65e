-- Media files (a channel's downloads, the message tool's attachments), so a
-- host that lacks one reads it: ref is the path the sharing host named it by,
-- sha256 lets a host tell its local copy is the same file.
CREATE TABLE media (
    instance   text NOT NULL,
    ref        text NOT NULL,
    size       bigint NOT NULL,
    sha256     bytea NOT NULL,
    data       bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (instance, ref)
);
