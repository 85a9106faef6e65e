//go:build !goolm

package matrix

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// e2eeBuilt: this binary was built without the goolm tag, so without
// end-to-end encryption (mautrix's crypto would need cgo and libolm).
const e2eeBuilt = false

// e2ee is never opened in this build; the channel skips encrypted rooms.
type e2ee struct{}

var (
	errCryptoUnusable = errors.New("matrix end-to-end encryption is not in this build (build with -tags goolm, as make does)")
	errUndecryptable  = errCryptoUnusable
	errForged         = errCryptoUnusable
)

func openE2EE(context.Context, *mautrix.Client, string, *slog.Logger) (*e2ee, error) {
	return nil, errCryptoUnusable
}

func (*e2ee) usable() bool                                       { return false }
func (*e2ee) close()                                             {}
func (*e2ee) device() id.DeviceID                                { return "" }
func (*e2ee) handleSync(context.Context, syncCrypto, string)     {}
func (*e2ee) noteState(context.Context, string, json.RawMessage) {}
func (*e2ee) encrypted(context.Context, string) (bool, error)    { return false, errCryptoUnusable }
func (*e2ee) bind(*mautrix.Client)                               {}

func (*e2ee) decrypt(context.Context, string, json.RawMessage) (rawEvent, error) {
	return rawEvent{}, errCryptoUnusable
}

func (*e2ee) encrypt(context.Context, string, event.Type, any) (*event.EncryptedEventContent, error) {
	return nil, errCryptoUnusable
}
