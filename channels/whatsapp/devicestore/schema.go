package devicestore

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the schema's versions in order: migrations[i] takes the
// file from version i to version i+1. Append, never edit a shipped step.
var migrations = [][]string{
	{ // 1: the linked device and everything whatsmeow keeps for it
		`CREATE TABLE device (
			id                INTEGER PRIMARY KEY CHECK (id = 1),
			jid               TEXT    NOT NULL,
			lid               TEXT    NOT NULL,
			registration_id   INTEGER NOT NULL,
			noise_key         BLOB    NOT NULL,
			identity_key      BLOB    NOT NULL,
			signed_prekey_id  INTEGER NOT NULL,
			signed_prekey     BLOB    NOT NULL,
			signed_prekey_sig BLOB    NOT NULL,
			adv_secret        BLOB    NOT NULL,
			account           BLOB,
			platform          TEXT    NOT NULL,
			business_name     TEXT    NOT NULL,
			push_name         TEXT    NOT NULL,
			lid_migration_ts  INTEGER NOT NULL,
			facebook_uuid     TEXT    NOT NULL
		)`,
		`CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)`,
		`CREATE TABLE identities (their_id TEXT PRIMARY KEY, identity BLOB NOT NULL)`,
		`CREATE TABLE sessions (address TEXT PRIMARY KEY, session BLOB NOT NULL)`,
		`CREATE TABLE prekeys (
			id          INTEGER PRIMARY KEY,
			private_key BLOB    NOT NULL,
			uploaded    INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE TABLE sender_keys (
			chat       TEXT NOT NULL,
			sender     TEXT NOT NULL,
			sender_key BLOB NOT NULL,
			PRIMARY KEY (chat, sender)
		)`,
		`CREATE TABLE app_state_sync_keys (
			key_id      BLOB    PRIMARY KEY,
			key_data    BLOB    NOT NULL,
			fingerprint BLOB    NOT NULL,
			timestamp   INTEGER NOT NULL
		)`,
		`CREATE TABLE app_state_version (
			name    TEXT    PRIMARY KEY,
			version INTEGER NOT NULL,
			hash    BLOB    NOT NULL
		)`,
		`CREATE TABLE app_state_mutation_macs (
			name      TEXT    NOT NULL,
			version   INTEGER NOT NULL,
			index_mac BLOB    NOT NULL,
			value_mac BLOB    NOT NULL,
			PRIMARY KEY (name, version, index_mac)
		)`,
		`CREATE INDEX app_state_mutation_macs_index ON app_state_mutation_macs (name, index_mac)`,
		`CREATE TABLE contacts (
			jid            TEXT PRIMARY KEY,
			first_name     TEXT NOT NULL DEFAULT '',
			full_name      TEXT NOT NULL DEFAULT '',
			push_name      TEXT NOT NULL DEFAULT '',
			business_name  TEXT NOT NULL DEFAULT '',
			redacted_phone TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE TABLE chat_settings (
			jid         TEXT    PRIMARY KEY,
			muted_until INTEGER NOT NULL DEFAULT 0,
			pinned      INTEGER NOT NULL DEFAULT 0,
			archived    INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE TABLE message_secrets (
			chat   TEXT NOT NULL,
			sender TEXT NOT NULL,
			id     TEXT NOT NULL,
			secret BLOB NOT NULL,
			PRIMARY KEY (chat, sender, id)
		)`,
		`CREATE TABLE privacy_tokens (
			jid       TEXT    PRIMARY KEY,
			token     BLOB    NOT NULL,
			timestamp INTEGER NOT NULL
		)`,
		`CREATE TABLE event_buffer (
			ciphertext_hash BLOB    PRIMARY KEY,
			plaintext       BLOB,
			server_time     INTEGER NOT NULL,
			insert_time     INTEGER NOT NULL
		)`,
		`CREATE TABLE lid_map (lid TEXT PRIMARY KEY, pn TEXT NOT NULL UNIQUE)`,
	},
}

// SchemaVersion is the version a store is at once Open returns.
var SchemaVersion = len(migrations)

// deviceTables hold one account's data; DeleteDevice empties them.
// lid_map is not among them: LID↔phone pairs are facts about other
// users, true whichever account is linked.
var deviceTables = []string{
	"device", "counters", "identities", "sessions", "prekeys", "sender_keys",
	"app_state_sync_keys", "app_state_version", "app_state_mutation_macs",
	"contacts", "chat_settings", "message_secrets", "privacy_tokens", "event_buffer",
}

// migrate brings the file's schema to SchemaVersion in one transaction.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin schema upgrade: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_version: %w", err)
	}
	version := 0
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version)
	switch {
	case err == sql.ErrNoRows:
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return fmt.Errorf("init schema_version: %w", err)
		}
	case err != nil:
		return fmt.Errorf("read schema_version: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this nanobot knows (%d)", version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("schema step %d: %w", v+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, len(migrations)); err != nil {
		return fmt.Errorf("set schema_version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit schema upgrade: %w", err)
	}
	return nil
}
