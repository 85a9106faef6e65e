//go:build !goolm

package integration

import (
	"testing"

	"github.com/nanobot-durable/nanobot/internal/peer"
)

// TestMatrixEncryptedDMEndToEnd needs the goolm build: without it, said,
// and failed where tests are required.
func TestMatrixEncryptedDMEndToEnd(t *testing.T) {
	peer.Missing(t, "goolm", "the Matrix end-to-end encryption tests need the goolm build tag: go test -tags goolm (make test sets it)")
}
