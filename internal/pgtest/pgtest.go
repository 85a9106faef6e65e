// Package pgtest gives a test its own database on the PostgreSQL cluster
// that `make test` starts (e2e/postgres.sh), named by NANOBOT_TEST_DATABASE_URL.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nanobot-durable/nanobot/internal/peer"
)

// EnvVar names the cluster the tests may use.
const EnvVar = "NANOBOT_TEST_DATABASE_URL"

// Database creates an empty database for this test, dropped when it ends,
// and returns its URL. Without EnvVar the peer is missing (peer.Missing:
// a skip locally, a failure under CI); with it set, a cluster that cannot
// be reached fails the test: it was promised.
func Database(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvVar)
	if admin == "" {
		peer.Missing(t, peer.PostgreSQL, EnvVar+" is not set: make test starts a cluster with e2e/postgres.sh (apt package postgresql)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		peer.Broken(t, peer.PostgreSQL, fmt.Sprintf("%s is set but the database cannot be reached: %v", EnvVar, err))
	}
	defer conn.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "nanobot_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database %s: %v", name, err)
	}
	peer.Used(t, peer.PostgreSQL)
	t.Cleanup(func() { Drop(t, admin, name) })
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", EnvVar, err)
	}
	u.Path = "/" + name
	return u.String()
}

// Drop removes database name on the cluster admin reaches, closing what the test left connected.
func Drop(t testing.TB, admin, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Errorf("drop test database %s: %v", name, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Errorf("drop test database %s: %v", name, err)
	}
}
