package whatsapp

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// fakeWA stands in for whatsmeow at the waClient seam (see client.go: the
// one place the wire is not reached): it records what the channel sent and
// pushes the events whatsmeow would.
type fakeWA struct {
	mu       sync.Mutex
	paired   bool
	pn, lid  types.JID
	events   chan any
	closed   bool
	connects int
	failConn int // Connect fails this many times first
	sent     []sentMessage
	sendErr  error
	uploads  []whatsmeow.MediaType
	files    map[string][]byte // Download by direct path
	presence []string          // "composing"/"paused" chat
	reads    []string
	lidPN    map[string]string
	qr       chan whatsmeow.QRChannelItem
	pairedTo string
}

type sentMessage struct {
	to  types.JID
	msg *waE2E.Message
}

func newFake() *fakeWA {
	return &fakeWA{
		paired: true, pn: types.NewJID("15550001111", types.DefaultUserServer), lid: types.NewJID("99887766", types.HiddenUserServer),
		events: make(chan any, 64), files: map[string][]byte{}, lidPN: map[string]string{},
	}
}

func (f *fakeWA) opener() openClient {
	return func(context.Context, string, *slog.Logger) (waClient, error) { return f, nil }
}

func (f *fakeWA) Paired() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.paired }
func (f *fakeWA) Self() (types.JID, types.JID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.paired {
		return types.EmptyJID, types.EmptyJID
	}
	return types.NewADJID(f.pn.User, 0, 7), f.lid
}

func (f *fakeWA) Connect(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.connects++
	if f.failConn > 0 {
		f.failConn--
		return errors.New("dial tcp: connection refused")
	}
	return nil
}

func (f *fakeWA) Disconnect()        {}
func (f *fakeWA) Events() <-chan any { return f.events }
func (f *fakeWA) push(evt any)       { f.events <- evt }

func (f *fakeWA) QR(context.Context) (<-chan whatsmeow.QRChannelItem, error) { return f.qr, nil }
func (f *fakeWA) PairPhone(_ context.Context, phone string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pairedTo = phone
	return "ABCD-EFGH", nil
}

func (f *fakeWA) Send(_ context.Context, to types.JID, msg *waE2E.Message) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sendErr != nil {
		return "", f.sendErr
	}
	f.sent = append(f.sent, sentMessage{to, msg})
	return "3EB0SENT" + string(rune('A'+len(f.sent))), nil
}

func (f *fakeWA) Upload(_ context.Context, data []byte, kind whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uploads = append(f.uploads, kind)
	return whatsmeow.UploadResponse{URL: "https://mmg.example/x", DirectPath: "/v/x", MediaKey: []byte("k"), FileLength: uint64(len(data))}, nil
}

func (f *fakeWA) Download(_ context.Context, msg whatsmeow.DownloadableMessage) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.files[msg.GetDirectPath()]
	if !ok {
		return nil, whatsmeow.ErrNoURLPresent
	}
	return data, nil
}

func (f *fakeWA) ChatPresence(_ context.Context, chat types.JID, composing bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	state := "paused"
	if composing {
		state = "composing"
	}
	f.presence = append(f.presence, state+" "+chat.String())
	return nil
}

func (f *fakeWA) MarkRead(_ context.Context, id types.MessageID, _, _ types.JID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads = append(f.reads, id)
	return nil
}

func (f *fakeWA) PhoneForLID(_ context.Context, lid types.JID) (types.JID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.lidPN[lid.User]; ok {
		return types.NewJID(p, types.DefaultUserServer), nil
	}
	return types.EmptyJID, nil
}

func (f *fakeWA) Unpair(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paired = false
	return nil
}

func (f *fakeWA) Close() error { f.mu.Lock(); defer f.mu.Unlock(); f.closed = true; return nil }

func (f *fakeWA) sentMessages() []sentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sentMessage(nil), f.sent...)
}

func (f *fakeWA) presences() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.presence...)
}

func (f *fakeWA) connectCount() int { f.mu.Lock(); defer f.mu.Unlock(); return f.connects }

func (f *fakeWA) isClosed() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.closed }

// dm is a text message from a phone number to the bot.
func dm(id, from, body string) *events.Message {
	j := types.NewJID(from, types.DefaultUserServer)
	return &events.Message{
		Info:    types.MessageInfo{MessageSource: types.MessageSource{Chat: j, Sender: j}, ID: id},
		Message: &waE2E.Message{Conversation: &body},
	}
}

// groupMsg is a text message in a group; ci carries mentions or a quote.
func groupMsg(id, group, from, body string, ci *waE2E.ContextInfo) *events.Message {
	m := &waE2E.Message{Conversation: &body}
	if ci != nil {
		m = &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: &body, ContextInfo: ci}}
	}
	return &events.Message{
		Info: types.MessageInfo{MessageSource: types.MessageSource{
			Chat: types.NewJID(group, types.GroupServer), Sender: types.NewJID(from, types.DefaultUserServer), IsGroup: true,
		}, ID: id},
		Message: m,
	}
}

var _ waClient = (*fakeWA)(nil)
