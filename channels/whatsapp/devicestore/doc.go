// Package devicestore keeps a whatsmeow linked device in one SQLite file
// (modernc.org/sqlite, no cgo): the device's keys and JIDs, and every
// store interface whatsmeow's client needs (go.mau.fi/whatsmeow/store:
// identities, sessions, pre-keys, sender keys, app state, contacts, chat
// settings, message secrets, privacy tokens, the decrypted-event buffer
// and the LID↔phone map). It is nanobot's own schema and code: one
// device per file, a versioned schema (schema.go), one *Container that is
// every store at once.
package devicestore
