package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

func TestLastLogLineSaysWhyInOneLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "temporal-dev.log")
	require.NoError(t, os.WriteFile(p, []byte("starting\nopen temporal.db: unable to open database file: permission denied\n\n"), 0o600))
	require.Equal(t, "open temporal.db: unable to open database file: permission denied", lastLogLine(p))
	require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("x", 1000)), 0o600))
	require.Len(t, []rune(lastLogLine(p)), 301)
	require.Equal(t, "no log", lastLogLine(filepath.Join(t.TempDir(), "missing")))
}

// TestClientOptionsSkipGzipOnLoopback: a Temporal on this machine is dialed without gzip (CPU on
// both ends for no bytes worth saving); any other keeps the SDK's default compression.
func TestClientOptionsSkipGzipOnLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:7233", "localhost:7233", "[::1]:7233"} {
		require.IsType(t, &client.GrpcCompressionNone{}, clientOptions(addr, "default", slog.Default()).ConnectionOptions.GrpcCompression, addr)
	}
	for _, addr := range []string{"temporal.internal:7233", "10.0.0.5:7233", "my-ns.tmprl.cloud:7233"} {
		require.Nil(t, clientOptions(addr, "default", slog.Default()).ConnectionOptions.GrpcCompression, addr)
	}
}
