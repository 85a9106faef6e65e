// Package sqlstore is whatsmeow's store/sqlstore (go.mau.fi/whatsmeow
// v0.0.0-20251217143725-11cf47c62d32), copied unchanged but for one line:
// upgrades.Table is built with go.mau.fi/util's upgrade-table builder,
// since util v0.10+ (which mautrix, the Matrix channel, needs) dropped the
// RegisterFS that upstream's upgrades package calls, so upstream's
// sqlstore does not compile in this module. The files keep their MPL-2.0
// headers; drop this copy once whatsmeow builds against util v0.11.
package sqlstore
