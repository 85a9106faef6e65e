package whatsapp

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/testenv"
)

func loginDeps(t *testing.T, block map[string]any, force bool) (channels.LoginDeps, *testenv.SyncBuffer) {
	t.Helper()
	raw, err := json.Marshal(block)
	require.NoError(t, err)
	cfg := config.Default()
	cfg.Channels.Other = map[string]json.RawMessage{"whatsapp": raw}
	out := &testenv.SyncBuffer{}
	return channels.LoginDeps{Config: cfg, Home: t.TempDir(), Out: out, Force: force, Log: slog.Default()}, out
}

// The login prints each QR code whatsmeow emits, and says who was paired
// once the phone scanned one and the device connected.
func TestLoginByQR(t *testing.T) {
	wa := newFake()
	wa.paired = false
	wa.qr = make(chan whatsmeow.QRChannelItem, 4)
	wa.qr <- whatsmeow.QRChannelItem{Event: whatsmeow.QRChannelEventCode, Code: "2@first-code", Timeout: time.Minute}
	wa.qr <- whatsmeow.QRChannelItem{Event: whatsmeow.QRChannelEventCode, Code: "2@second-code", Timeout: 20 * time.Second}
	wa.qr <- whatsmeow.QRChannelSuccess
	l, out := loginDeps(t, map[string]any{}, false)
	go func() {
		for wa.connectCount() == 0 {
			time.Sleep(5 * time.Millisecond) // the login connects at once
		}
		wa.mu.Lock()
		wa.paired = true
		wa.mu.Unlock()
		wa.push(&events.PairSuccess{})
		wa.push(&events.Connected{})
	}()
	require.NoError(t, login(context.Background(), l, wa.opener()))
	text := out.String()
	require.Contains(t, text, "2@first-code")
	require.Contains(t, text, "2@second-code")
	require.Contains(t, text, "█", "drawn as a QR code")
	require.Contains(t, text, "Paired as +15550001111")
	require.True(t, wa.isClosed())
}

// With phoneNumber set, the login shows one pairing code instead of QR codes.
func TestLoginByPairingCode(t *testing.T) {
	wa := newFake()
	wa.paired = false
	wa.qr = make(chan whatsmeow.QRChannelItem, 4)
	wa.qr <- whatsmeow.QRChannelItem{Event: whatsmeow.QRChannelEventCode, Code: "2@qr"}
	wa.qr <- whatsmeow.QRChannelItem{Event: whatsmeow.QRChannelEventCode, Code: "2@qr2"}
	wa.qr <- whatsmeow.QRChannelSuccess
	wa.push(&events.Connected{})
	l, out := loginDeps(t, map[string]any{"phoneNumber": "+1 (555) 000-1111"}, false)
	require.NoError(t, login(context.Background(), l, wa.opener()))
	require.Equal(t, "15550001111", wa.pairedTo)
	require.Contains(t, out.String(), "ABCD-EFGH")
	require.NotContains(t, out.String(), "2@qr")
}

// A stored device is kept unless --force; --force forgets it and pairs anew.
func TestLoginAlreadyPaired(t *testing.T) {
	wa := newFake()
	l, out := loginDeps(t, map[string]any{}, false)
	require.NoError(t, login(context.Background(), l, wa.opener()))
	require.Contains(t, out.String(), "Already paired as +15550001111")
	require.Zero(t, wa.connects)

	wa = newFake()
	wa.qr = make(chan whatsmeow.QRChannelItem, 1)
	wa.qr <- whatsmeow.QRChannelTimeout
	l, _ = loginDeps(t, map[string]any{}, true)
	err := login(context.Background(), l, wa.opener())
	require.ErrorContains(t, err, "no code was scanned in time")
	require.False(t, wa.Paired(), "--force forgot the old device")
}
