package config

import (
	"net/url"
	"strings"
)

// DatabaseURLVar names the database outside the config file; it wins over database.url.
const DatabaseURLVar = "NANOBOT_DATABASE_URL"

// Database is where nanobot keeps its state when it outgrows one disk (a
// key nanobot does not have).
type Database struct {
	// URL is a PostgreSQL URL (postgres://user:password@host:5432/db); "" keeps
	// the JSONL files under the home, the default for one host.
	URL string `json:"url"`
	// source says where URL came from, for messages.
	source string
}

// Source names where the URL was set ("env NANOBOT_DATABASE_URL" or the config file).
func (d Database) Source() string { return d.source }

// applyDatabaseEnv lets NANOBOT_DATABASE_URL override database.url.
func applyDatabaseEnv(c *Config, environ []string, src string) {
	if v := strings.TrimSpace(lookupEnv(environ, DatabaseURLVar)); v != "" {
		c.Database.URL, c.Database.source = v, envSource(DatabaseURLVar)
	} else if c.Database.URL != "" {
		c.Database.source = src
	}
}

// validate checks the URL's form; whether the database answers is
// checked when the stores open.
func (d Database) validate() error {
	if d.URL == "" {
		return nil
	}
	u, err := url.Parse(d.URL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return &Error{Source: d.source, Key: "database.url", Msg: "not a PostgreSQL URL: want postgres://user:password@host:5432/database"}
	}
	return nil
}
