package telegram

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/channeltest"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// call is one Bot API request the fake server received.
type call struct {
	Method string
	Form   map[string]string
}

// fakeAPI is a Bot API server at the wire for what the emulator cannot
// do (429s, refusals, HTML parse errors). It reads only URL-encoded forms,
// like telegram-test-api, so it also checks the transport's encoding.
type fakeAPI struct {
	t   *testing.T
	srv *httptest.Server

	mu     sync.Mutex
	calls  []call
	nextID int
	// answer, when set, may answer a call itself (status, body); ok=false
	// gives the default answer.
	answer func(c call, n int) (status int, body string, ok bool)
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{t: t, nextID: 100}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/file/") {
		f.mu.Lock()
		f.calls = append(f.calls, call{Method: "download", Form: map[string]string{"path": r.URL.Path}})
		f.mu.Unlock()
		if strings.Contains(r.URL.Path, "gone") { // a file the server no longer has
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("file bytes of " + r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]))
		return
	}
	method := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	c := call{Method: method, Form: map[string]string{}}
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/") {
		// only an upload may come as multipart; the file's name is recorded
		if err := r.ParseMultipartForm(1 << 20); err != nil || len(r.MultipartForm.File) == 0 {
			http.Error(w, `{"message":"multipart without a file"}`, http.StatusInternalServerError)
			return
		}
		for field, files := range r.MultipartForm.File {
			c.Form[field] = "upload:" + files[0].Filename
		}
		for k, v := range r.MultipartForm.Value {
			c.Form[k] = v[0]
		}
	} else {
		require.NoError(f.t, r.ParseForm())
		for k := range r.PostForm {
			c.Form[k] = r.PostForm.Get(k)
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	n := 0
	for _, prev := range f.calls {
		if prev.Method == method {
			n++
		}
	}
	answer := f.answer
	f.nextID++
	id := f.nextID
	f.mu.Unlock()
	if answer != nil {
		if status, body, ok := answer(c, n); ok {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return
		}
	}
	var result any = true
	switch method {
	case "getMe":
		result = map[string]any{"id": 666, "is_bot": true, "username": "NanoBot", "first_name": "Nano"}
	case "getUpdates":
		result = []any{}
	case "getFile":
		filePath := "photos/" + c.Form["file_id"] + ".jpg"
		if strings.HasPrefix(c.Form["file_id"], "video") { // a type no MIME table knows
			filePath = "videos/" + c.Form["file_id"] + ".zzq"
		}
		result = map[string]any{"file_id": c.Form["file_id"], "file_unique_id": "u-" + c.Form["file_id"], "file_size": 20, "file_path": filePath}
	case "sendMessage", "editMessageText", "editMessageReplyMarkup", "sendPhoto", "sendDocument":
		result = map[string]any{"message_id": id, "date": 1, "chat": map[string]any{"id": 42, "type": "private"}}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

// sent returns the calls of the given methods, in order.
func (f *fakeAPI) sent(methods ...string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		for _, m := range methods {
			if c.Method == m {
				out = append(out, c)
			}
		}
	}
	return out
}

// startChannel runs a channel against the fake server.
func startChannel(t *testing.T, f *fakeAPI, edit func(*config.Config)) *Channel {
	return startChannelWith(t, f, edit, nil)
}

// startChannelWith runs a channel whose dedupe sets come from seen, as a
// gateway on a database opens them (nil: the channel keeps its own).
func startChannelWith(t *testing.T, f *fakeAPI, edit func(*config.Config), seen func(string, int) channels.SeenKeys) *Channel {
	cfg := config.Default()
	editBlock(t, cfg, func(b *Config) {
		b.Enabled, b.Token, b.APIBase, b.StreamEditInterval, b.AllowFrom = true, "123:abc", f.srv.URL, 0.1, []string{"*"}
	})
	if edit != nil {
		edit(cfg)
	}
	c, err := New(channels.Deps{Config: cfg, Workspace: t.TempDir(), Seen: seen})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, c.Start(ctx, func(context.Context, protocol.Inbound, channels.Admitted) error { return nil }))
	t.Cleanup(func() {
		cancel()
		require.NoError(t, c.Stop(context.Background()))
	})
	return c
}

var dm = protocol.Route{Channel: Name, ChatID: "42", SenderID: "42|alice"}

// capture stands where the bus is, behind a real manager, and records
// what the manager lets through.
type capture struct{ bus *channeltest.Bus }

// via admits as a gateway does: the channel's allowFrom, then a pairing
// store, then the channel's hook.
func (p *capture) via(t *testing.T, c *Channel) channels.Publish {
	cfg := config.Default()
	require.NoError(t, cfg.SetChannelBlock(Name, c.cfg))
	publish, b := channeltest.BehindManager(t, cfg, c)
	p.bus = b
	return publish
}

func (p *capture) got() []protocol.Inbound {
	if p.bus == nil {
		return nil
	}
	return p.bus.Admitted()
}
