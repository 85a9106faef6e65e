package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/nanobot-durable/nanobot/channels/whatsapp/devicestore"
)

// This file is the real waClient: whatsmeow's client over our device
// store (devicestore: one SQLite file through modernc.org/sqlite). It is
// the only code that talks to WhatsApp's servers and the only file the
// tests cannot run (see waClient); keep it a thin pass-through.

// eventBuffer holds whatsmeow's events while the channel handles one.
const eventBuffer = 256

// meow is whatsmeow's client and the device store it runs on.
type meow struct {
	db     *devicestore.Container
	device *store.Device
	cli    *whatsmeow.Client
	events chan any
	done   chan struct{}
	close  sync.Once
	// available: chat presences show only once the account said it is online.
	available atomic.Bool
}

// openWhatsmeow opens (or creates) the device store at path, directory
// 0700 and file 0600 (it holds the device's keys), and a client on its
// first device.
func openWhatsmeow(ctx context.Context, path string, log *slog.Logger) (waClient, error) {
	db, err := devicestore.Open(ctx, path, logger{log.With("source", "whatsmeow-store")})
	if err != nil {
		return nil, err
	}
	device, err := db.GetFirstDevice(ctx)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("whatsapp device store %s: %w", path, err)
	}
	m := &meow{db: db, device: device, events: make(chan any, eventBuffer), done: make(chan struct{})}
	m.cli = whatsmeow.NewClient(device, logger{log.With("source", "whatsmeow")})
	m.cli.EnableAutoReconnect = true
	m.cli.InitialAutoReconnect = true // a network error at start is retried too
	m.cli.AddEventHandler(m.forward)
	return m, nil
}

// forward hands whatsmeow's events to the channel; once closed, they are dropped.
func (m *meow) forward(evt any) {
	select {
	case m.events <- evt:
	case <-m.done:
	}
}

func (m *meow) Paired() bool { return m.device.ID != nil }

func (m *meow) Self() (types.JID, types.JID) {
	if m.device.ID == nil {
		return types.EmptyJID, m.device.LID
	}
	return *m.device.ID, m.device.LID
}

func (m *meow) Connect(ctx context.Context) error {
	err := m.cli.ConnectContext(ctx)
	if errors.Is(err, whatsmeow.ErrAlreadyConnected) {
		return nil
	}
	return err
}

func (m *meow) Disconnect() { m.cli.Disconnect() }

func (m *meow) Events() <-chan any { return m.events }

func (m *meow) QR(ctx context.Context) (<-chan whatsmeow.QRChannelItem, error) {
	return m.cli.GetQRChannel(ctx)
}

func (m *meow) PairPhone(ctx context.Context, phone string) (string, error) {
	return m.cli.PairPhone(ctx, phone, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
}

func (m *meow) Send(ctx context.Context, to types.JID, msg *waE2E.Message) (string, error) {
	resp, err := m.cli.SendMessage(ctx, to, msg)
	return resp.ID, err
}

func (m *meow) Upload(ctx context.Context, data []byte, kind whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	return m.cli.Upload(ctx, data, kind)
}

func (m *meow) Download(ctx context.Context, msg whatsmeow.DownloadableMessage) ([]byte, error) {
	return m.cli.Download(ctx, msg)
}

func (m *meow) ChatPresence(ctx context.Context, chat types.JID, composing bool) error {
	state := types.ChatPresencePaused
	if composing {
		state = types.ChatPresenceComposing
		if !m.available.Load() && m.cli.SendPresence(ctx, types.PresenceAvailable) == nil {
			m.available.Store(true)
		}
	}
	return m.cli.SendChatPresence(ctx, chat, state, types.ChatPresenceMediaText)
}

func (m *meow) MarkRead(ctx context.Context, id types.MessageID, chat, sender types.JID) error {
	return m.cli.MarkRead(ctx, []types.MessageID{id}, time.Now(), chat, sender)
}

func (m *meow) PhoneForLID(ctx context.Context, lid types.JID) (types.JID, error) {
	return m.device.LIDs.GetPNForLID(ctx, lid)
}

func (m *meow) Unpair(ctx context.Context) error {
	if m.device.ID == nil {
		return nil
	}
	if err := m.device.Delete(ctx); err != nil {
		return fmt.Errorf("whatsapp: forget the stored device: %w", err)
	}
	m.device = m.db.NewDevice()
	m.cli = whatsmeow.NewClient(m.device, m.cli.Log)
	m.cli.EnableAutoReconnect, m.cli.InitialAutoReconnect = true, true
	m.cli.AddEventHandler(m.forward)
	return nil
}

func (m *meow) Close() error {
	var err error
	m.close.Do(func() {
		m.cli.Disconnect()
		close(m.done)
		err = m.db.Close()
	})
	return err
}

// logger routes whatsmeow's log lines to slog (its debug noise at debug).
type logger struct{ l *slog.Logger }

func (g logger) Errorf(msg string, args ...any) { g.l.Error(fmt.Sprintf(msg, args...)) }
func (g logger) Warnf(msg string, args ...any)  { g.l.Warn(fmt.Sprintf(msg, args...)) }
func (g logger) Infof(msg string, args ...any)  { g.l.Debug(fmt.Sprintf(msg, args...)) }
func (g logger) Debugf(msg string, args ...any) { g.l.Debug(fmt.Sprintf(msg, args...)) }
func (g logger) Sub(module string) waLog.Logger { return logger{g.l.With("module", module)} }
