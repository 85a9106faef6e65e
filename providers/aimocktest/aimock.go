// Package aimocktest runs aimock (the third-party model API mock installed
// by e2e/install.sh) for tests: Anthropic's Messages API, Azure OpenAI and
// OpenAI's Responses API answered from fixture files, on 127.0.0.1. A tap in
// front of it keeps every request's bytes, since aimock's own journal holds
// only its OpenAI-shaped reading of a request.
package aimocktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/peer"
)

// Request is one request as it reached the tap.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r Request) JSON(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "request body: %s", r.Body)
}

// JournalEntry is one request in aimock's journal.
type JournalEntry struct {
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	Headers  map[string]string `json:"headers"`
	Body     json.RawMessage   `json:"body"`
	Response struct {
		Status int `json:"status"`
	} `json:"response"`
}

// Server is a running aimock with its tap.
type Server struct {
	direct string // aimock itself
	tap    *httptest.Server
	log    *lockedBuffer

	mu   sync.Mutex
	reqs []Request
}

// Binary is where e2e/install.sh puts aimock's llmock program, found from
// the working directory up to the module root; "" when it is not there.
func Binary() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			bin := filepath.Join(dir, "e2e", "node_modules", ".bin", "llmock")
			if _, err := os.Stat(bin); err != nil {
				return ""
			}
			return bin
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Start runs aimock in strict mode on a free 127.0.0.1 port with the
// fixtures of dir and waits until it answers; where aimock is not
// installed the peer is missing (a skip locally, a failure under CI). It
// is stopped when the test ends.
func Start(t testing.TB, dir string) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		peer.Missing(t, peer.Aimock, "aimock is not installed (e2e/node_modules lacks @copilotkit/aimock): install Node.js and npm, then run make e2e (e2e/install.sh)")
	}
	port := freePort(t)
	log := &lockedBuffer{}
	cmd := exec.Command(bin, "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-f", dir, "--strict")
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start(), "start aimock")
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("aimock output:\n%s", log.String())
		}
	})
	s := &Server{direct: fmt.Sprintf("http://127.0.0.1:%d", port), log: log}
	require.Eventually(t, func() bool {
		resp, err := http.Get(s.direct + "/health")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 50*time.Millisecond, "aimock did not start")
	peer.Used(t, peer.Aimock)
	target, err := url.Parse(s.direct)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1 // pass server-sent events on as they come
	s.tap = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_ = r.Body.Close()
		s.mu.Lock()
		s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(s.tap.Close)
	return s
}

// URL is the tap's base URL (no path): point a client's base URL at it,
// with "/v1" where the client expects one.
func (s *Server) URL() string { return s.tap.URL }

// Requests returns every request the tap passed on, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Journal is aimock's record of the requests it answered.
func (s *Server) Journal(t testing.TB) []JournalEntry {
	t.Helper()
	resp, err := http.Get(s.direct + "/__aimock/journal")
	require.NoError(t, err)
	defer resp.Body.Close()
	var out []JournalEntry
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// Fixtures writes {"fixtures": [...]} into a fresh directory and returns
// the directory, for Start.
func Fixtures(t testing.TB, fixtures ...any) string {
	t.Helper()
	dir := t.TempDir()
	b, err := json.MarshalIndent(map[string]any{"fixtures": fixtures}, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fixtures.json"), b, 0o644))
	return dir
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// lockedBuffer lets aimock's two output streams share one buffer.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
