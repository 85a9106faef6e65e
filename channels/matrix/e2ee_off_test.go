//go:build !goolm

package matrix

import (
	"testing"

	"github.com/nanobot-durable/nanobot/internal/peer"
)

// encryptedBadLog is what a m.room.encrypted event is logged as: this
// build has no end-to-end encryption.
const encryptedBadLog = "encrypted room skipped"

// TestEncryptedDM needs the goolm build: without it, said, and failed
// where tests are required.
func TestEncryptedDM(t *testing.T) {
	peer.Missing(t, "goolm", "the end-to-end encryption tests need the goolm build tag: go test -tags goolm (make test sets it)")
}
