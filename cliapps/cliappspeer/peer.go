// Package cliappspeer serves, on 127.0.0.1, what nanobot's CLI Apps reach
// over the network: the catalog's registries and skills (CLI-Anything's
// and nanobot-extension's layout) and an npm registry with the apps'
// packages, so installs run the real npm against the wire.
package cliappspeer

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nanobot-durable/nanobot/internal/peer"
)

// Package is an npm package whose one bin runs Script (a Node.js program).
type Package struct {
	Name, Version, Bin, Script string
}

// Server is the catalog and npm registry.
type Server struct {
	// URL is the catalog's base (cliapps.CatalogEnv).
	URL string

	mu       sync.Mutex
	files    map[string][]byte
	requests []string
}

// Start serves registries (path under the base → registry object, e.g.
// "registry.json"), skills (path → SKILL.md text) and packages until the test ends.
func Start(t testing.TB, registries map[string]any, skills map[string]string, packages ...Package) *Server {
	t.Helper()
	s := &Server{files: map[string][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	for path, reg := range registries {
		body, err := json.Marshal(reg)
		if err != nil {
			t.Fatal(err)
		}
		s.files["/"+path] = body
	}
	for path, text := range skills {
		s.files["/"+path] = []byte(text)
	}
	for _, p := range packages {
		s.addPackage(t, p)
	}
	return s
}

// NPMRegistry is the npm registry's URL (npm_config_registry).
func (s *Server) NPMRegistry() string { return s.URL + "/npm/" }

// Requests are the paths asked for, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.Path)
	body, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if strings.HasSuffix(r.URL.Path, ".tgz") {
		w.Header().Set("Content-Type", "application/octet-stream")
	} else if strings.HasSuffix(r.URL.Path, ".json") || strings.HasPrefix(r.URL.Path, "/npm/") {
		w.Header().Set("Content-Type", "application/json")
	}
	_, _ = w.Write(body)
}

// addPackage publishes p: its packument and its tarball (package/package.json, package/<bin>.js).
func (s *Server) addPackage(t testing.TB, p Package) {
	t.Helper()
	script := p.Bin + ".js"
	manifest := map[string]any{"name": p.Name, "version": p.Version, "bin": map[string]string{p.Bin: script}}
	pkgJSON, _ := json.Marshal(manifest)
	var tgz bytes.Buffer
	gz := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		body []byte
		mode int64
	}{{"package/package.json", pkgJSON, 0o644}, {"package/" + script, []byte("#!/usr/bin/env node\n" + p.Script), 0o755}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), ModTime: time.Unix(1_700_000_000, 0), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	tarPath := "/npm/" + p.Name + "/-/" + p.Name + "-" + p.Version + ".tgz"
	sum1, sum512 := sha1.Sum(tgz.Bytes()), sha512.Sum512(tgz.Bytes())
	version := map[string]any{}
	for k, v := range manifest {
		version[k] = v
	}
	version["dist"] = map[string]any{
		"tarball":   s.URL + tarPath,
		"shasum":    hex.EncodeToString(sum1[:]),
		"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum512[:]),
	}
	packument, _ := json.Marshal(map[string]any{
		"name": p.Name, "dist-tags": map[string]string{"latest": p.Version},
		"versions": map[string]any{p.Version: version},
	})
	s.files["/npm/"+p.Name] = packument
	s.files[tarPath] = tgz.Bytes()
}

// NPM is the npm program, a missing peer where Node.js is not installed.
func NPM(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("npm")
	if err != nil {
		peer.Missing(t, peer.NPM, "npm is not installed (Node.js 20 comes with it)")
	}
	peer.Used(t, peer.NPM)
	return p
}

// NPMEnv is the environment an install needs to use this registry and
// nothing else: no audit, no funding or update notices, a cache of the test's own.
func (s *Server) NPMEnv(cacheDir string) []string {
	return []string{
		"npm_config_registry=" + s.NPMRegistry(), "npm_config_cache=" + cacheDir, "npm_config_audit=false",
		"npm_config_fund=false", "npm_config_update_notifier=false", "npm_config_offline=false",
	}
}
