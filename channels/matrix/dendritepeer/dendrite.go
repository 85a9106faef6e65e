// Package dendritepeer runs a real Matrix homeserver (dendrite, built into
// bin/dendrite by `make dendrite`) for tests, and talks to it as a Matrix
// user would: plain client-server API calls, no Matrix library, so the
// channel's library is checked against the wire and not against itself.
package dendritepeer

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	_ "modernc.org/sqlite" // to put dendrite's databases in WAL mode before it opens them
)

// ServerName is the homeserver's name: users are @name:localhost.
const ServerName = "localhost"

// Homeserver is a running dendrite.
type Homeserver struct {
	// URL is the client-server API base, http://127.0.0.1:port.
	URL string
	dir string

	mu    sync.Mutex
	users map[string]*User
}

// Options change the homeserver's configuration.
type Options struct {
	// RateLimit turns dendrite's client rate limiting on: after Threshold
	// requests a user is told M_LIMIT_EXCEEDED with retry_after_ms = CooloffMS.
	RateLimit *RateLimit
	// MaxUploadBytes is the media repository's upload limit (0: 10 MiB).
	MaxUploadBytes int
}

// RateLimit is dendrite's client_api.rate_limiting.
type RateLimit struct {
	Threshold int
	CooloffMS int
	// Exempt are user localparts never limited (the test's own users).
	Exempt []string
}

// Bin is bin/dendrite (or DENDRITE_BIN); `make dendrite` builds it. Where
// it is not built the peer is missing: a skip locally, a failure under CI.
func Bin(t testing.TB) string {
	t.Helper()
	p := os.Getenv("DENDRITE_BIN")
	if p == "" {
		p = filepath.Join(testenv.RepoRoot(t), "bin", "dendrite")
	}
	if _, err := os.Stat(p); err != nil {
		peer.Missing(t, peer.Dendrite, fmt.Sprintf("%s is not built: run make dendrite (or make test)", p))
	}
	return p
}

// StartDendrite runs dendrite on 127.0.0.1 with SQLite under t.TempDir(),
// open registration and no federation, until the test ends.
func StartDendrite(t testing.TB, opts ...Options) *Homeserver {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	bin := Bin(t)
	dir := t.TempDir()
	writeKey(t, filepath.Join(dir, "matrix_key.pem"))
	for _, name := range databases {
		walDatabase(t, filepath.Join(dir, name+".db"))
	}
	cfgPath := filepath.Join(dir, "dendrite.yaml")
	if err := os.WriteFile(cfgPath, []byte(configYAML(dir, o)), 0o600); err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	logPath := filepath.Join(dir, "dendrite.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", cfgPath, "-really-enable-open-registration",
		"-http-bind-address", "127.0.0.1:"+strconv.Itoa(port))
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL} // never outlives the test
	if err := cmd.Start(); err != nil {
		t.Fatalf("dendritepeer: start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		logFile.Close()
		if t.Failed() {
			if out, err := os.ReadFile(logPath); err == nil {
				t.Logf("dendrite log (last 4 KB):\n%s", tail(out, 4096))
			}
		}
	})
	h := &Homeserver{URL: "http://127.0.0.1:" + strconv.Itoa(port), dir: dir, users: map[string]*User{}}
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(h.URL + "/_matrix/client/versions")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				peer.Used(t, peer.Dendrite)
				return h
			}
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(logPath)
			t.Fatalf("dendritepeer: dendrite exited before serving:\n%s", tail(out, 4096))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logPath)
			t.Fatalf("dendritepeer: dendrite did not answer at %s in 90s:\n%s", h.URL, tail(out, 4096))
		}
	}
}

// Log is what dendrite has logged so far.
func (h *Homeserver) Log() string {
	out, _ := os.ReadFile(filepath.Join(h.dir, "dendrite.log"))
	return string(out)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// writeKey writes the server's signing key in dendrite's format: a PEM
// block "MATRIX PRIVATE KEY" with its Key-ID, holding the ed25519 seed.
func writeKey(t testing.TB, path string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block := &pem.Block{Type: "MATRIX PRIVATE KEY", Headers: map[string]string{"Key-ID": "ed25519:test"}, Bytes: priv.Seed()}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
}

// databases are dendrite's SQLite files, one per component.
var databases = []string{"federationapi", "keyserver", "mediaapi", "mscs", "relayapi", "roomserver", "syncapi", "userapi"}

// walDatabase creates an empty SQLite file in WAL mode (the mode is kept in
// the file). Dendrite opens its files in rollback-journal mode, where a sync
// request's open read blocks a writer's commit until the 10 s busy timeout:
// a loaded CI run saw the sync API stall 10 s with an event unwritten.
func walDatabase(t testing.TB, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatalf("dendritepeer: open %s: %v", path, err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode=WAL").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("dendritepeer: %s in WAL mode: %q, %v", path, mode, err)
	}
}

// configYAML is a monolith on SQLite files in dir: one database per
// component (dendrite's SQLite cannot share one), JetStream in memory, no
// federation, no key perspectives (nothing leaves 127.0.0.1).
func configYAML(dir string, o Options) string {
	db := func(name string) string {
		return "    connection_string: file:" + filepath.Join(dir, name+".db") + "\n"
	}
	limit := "  rate_limiting:\n    enabled: false\n"
	if rl := o.RateLimit; rl != nil {
		var exempt bytes.Buffer
		for _, u := range rl.Exempt {
			fmt.Fprintf(&exempt, "      - \"@%s:%s\"\n", u, ServerName)
		}
		limit = fmt.Sprintf("  rate_limiting:\n    enabled: true\n    threshold: %d\n    cooloff_ms: %d\n    exempt_user_ids:\n%s",
			rl.Threshold, rl.CooloffMS, exempt.String())
	}
	upload := o.MaxUploadBytes
	if upload == 0 {
		upload = 10 << 20
	}
	var b strings.Builder
	fmt.Fprintf(&b, `version: 2
global:
  server_name: %s
  private_key: %s
  key_validity_period: 168h0m0s
  disable_federation: true
  trusted_third_party_id_servers: []
  presence:
    enable_inbound: false
    enable_outbound: false
  report_stats:
    enabled: false
  jetstream:
    in_memory: true
    storage_path: %s
    topic_prefix: Dendrite
  metrics:
    enabled: false
  dns_cache:
    enabled: false
app_service_api:
  config_files: []
client_api:
  registration_disabled: false
  guests_disabled: true
  registration_shared_secret: ""
  enable_registration_captcha: false
%sfederation_api:
  database:
%s  key_perspectives: []
key_server:
  database:
%smedia_api:
  database:
%s  base_path: %s
  max_file_size_bytes: %d
  dynamic_thumbnails: false
mscs:
  database:
%s  mscs: []
relay_api:
  database:
%sroom_server:
  database:
%ssync_api:
  database:
%s  search:
    enabled: false
user_api:
  bcrypt_cost: 4
  account_database:
%stracing:
  enabled: false
logging:
  - type: std
    level: warn
`, ServerName, filepath.Join(dir, "matrix_key.pem"), dir, limit,
		db("federationapi"), db("keyserver"), db("mediaapi"), filepath.Join(dir, "media"), upload,
		db("mscs"), db("relayapi"), db("roomserver"), db("syncapi"), db("userapi"))
	return b.String()
}
