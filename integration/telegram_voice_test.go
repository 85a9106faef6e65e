package integration

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/aimocktest"
)

// tgFiles stands in front of telegram-test-api for the two Bot API calls it
// lacks, getFile and the file download, and passes everything else through.
type tgFiles struct {
	mu    sync.Mutex
	files map[string][]byte // file_id → bytes
}

func (f *tgFiles) add(id string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[id] = data
}

func (f *tgFiles) start(t *testing.T, emulator string) string {
	t.Helper()
	target, err := url.Parse(emulator)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/getFile"):
			id := r.FormValue("file_id")
			if id == "" { // a JSON body
				var body struct {
					FileID string `json:"file_id"`
				}
				raw, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(raw, &body)
				id = body.FileID
			}
			f.mu.Lock()
			data, ok := f.files[id]
			f.mu.Unlock()
			if !ok {
				http.Error(w, `{"ok":false,"error_code":400,"description":"Bad Request: file not found"}`, http.StatusBadRequest)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": map[string]any{
				"file_id": id, "file_unique_id": "u" + id, "file_size": len(data), "file_path": "voice/" + id + ".oga",
			}})
		case strings.HasPrefix(r.URL.Path, "/file/bot"):
			id := strings.TrimSuffix(filepath.Base(r.URL.Path), ".oga")
			f.mu.Lock()
			data, ok := f.files[id]
			f.mu.Unlock()
			if !ok {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write(data)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// oggVoice is a minimal Ogg Opus voice note that lasts d (its last page's granule).
func oggVoice(d time.Duration) []byte {
	page := func(granule uint64, body string) []byte {
		b := make([]byte, 27)
		copy(b, "OggS")
		binary.LittleEndian.PutUint64(b[6:14], granule)
		return append(b, body...)
	}
	return append(page(0, "OpusHead\x01\x01"), page(uint64(d/time.Second)*48000, "audio")...)
}

// sayVoice sends a voice note from user into a private chat.
func (e *tgEmulator) sayVoice(t *testing.T, from tgUser, chatID int64, fileID string, size int, seconds int) {
	t.Helper()
	e.post(t, "/sendMessage", map[string]any{
		"botToken": e.Token, "from": from, "chat": map[string]any{"id": chatID, "type": "private", "first_name": from.FirstName},
		"date": time.Now().Unix(), "voice": map[string]any{
			"file_id": fileID, "file_unique_id": "u" + fileID, "duration": seconds, "mime_type": "audio/ogg", "file_size": size,
		},
	}, nil)
}

// TestTelegramVoiceNoteEndToEnd: a voice note sent on Telegram
// (telegram-test-api) is transcribed by aimock's Whisper endpoint before the
// turn and answered from its words (the model's fixture matches only the
// transcript); an over-long note and a refused transcription are answered
// with nanobot's hint, and the model reads "[voice: path]".
func TestTelegramVoiceNoteEndToEnd(t *testing.T) {
	tg := startTelegramEmulator(t)
	ai := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"endpoint": "transcription", "model": "whisper-large-v3"},
			"response": map[string]any{"transcription": map[string]any{"text": "Please remind me to buy oat milk."}}},
		map[string]any{"match": map[string]any{"endpoint": "transcription", "model": "refused-model"},
			"response": map[string]any{"error": map[string]any{"message": "Invalid API Key", "type": "invalid_request_error"}, "status": 401}},
		map[string]any{"match": map[string]any{"userMessage": "[transcription: Please remind me to buy oat milk.]"},
			"response": map[string]any{"content": "Noted: oat milk."}},
		map[string]any{"match": map[string]any{"userMessage": "[voice: "},
			"response": map[string]any{"content": "I could not listen to that one."}},
	))
	files := &tgFiles{files: map[string][]byte{}}
	apiBase := files.start(t, tg.URL)
	dev := testenv.StartDevServer(t)
	home := testenv.NewHome(t, ai.URL()+"/v1", map[string]any{
		"providers": map[string]any{
			"custom": map[string]any{"apiKey": "test-key", "apiBase": ai.URL() + "/v1"},
			"groq":   map[string]any{"apiKey": "gsk-test", "apiBase": ai.URL() + "/v1"},
		},
		"channels": map[string]any{"telegram": map[string]any{
			"enabled": true, "token": tg.Token, "apiBase": apiBase, "allowFrom": []string{"1001"},
		}},
	})
	status, _, code := runNanobot(t, home.Env(dev.Addr), "status")
	require.Equal(t, 0, code)
	require.Contains(t, status, "Voice:     groq whisper-large-v3 at "+ai.URL()+"/v1, at most 120 s and 25 MB")
	logs := startChannelGateway(t, home.Env(dev.Addr), "telegram")
	alice := tgUser{ID: 1001, FirstName: "Alice", Username: "alice"}
	texts := func() []string {
		var out []string
		for _, m := range tg.botMessages(t, 1001) {
			out = append(out, m.Text)
		}
		return out
	}
	waitTexts := func(what string, want ...string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Join(texts(), "|") == strings.Join(want, "|") },
			90*time.Second, 50*time.Millisecond, "%s; bot messages: %q\ngateway:\n%s", what, texts(), logs.String())
	}
	transcriptions := func() int {
		n := 0
		for _, r := range ai.Requests() {
			if r.Path == "/v1/audio/transcriptions" {
				n++
			}
		}
		return n
	}

	// A short note: transcribed once, answered from its words, kept in media/.
	note := oggVoice(4 * time.Second)
	files.add("v1", note)
	tg.sayVoice(t, alice, 1001, "v1", len(note), 4)
	waitTexts("the answer to the voice note", "Noted: oat milk.")
	require.Equal(t, 1, transcriptions())
	kept, err := os.ReadFile(filepath.Join(home.Workspace, "media", "telegram-uv1-voice.ogg"))
	require.NoError(t, err, "the voice note stays in media/")
	require.Equal(t, note, kept)

	// A note over maxDurationSec (120 s): not uploaded, the hint, then the model's answer.
	long := oggVoice(150 * time.Second)
	files.add("v2", long)
	tg.sayVoice(t, alice, 1001, "v2", len(long), 150)
	waitTexts("the hint for the long note", "Noted: oat milk.", protocol.HintRecordingTooLong, "I could not listen to that one.")
	require.Equal(t, 1, transcriptions(), "the long note was not sent to the provider")

	// The provider refuses the call (401, for a model the config now names): the failure hint.
	raw, err := os.ReadFile(home.ConfigPath)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(raw, &cfg))
	cfg["transcription"] = map[string]any{"model": "refused-model"}
	raw, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(home.ConfigPath, raw, 0o600))
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "config reloaded") }, 30*time.Second, 50*time.Millisecond)
	short := oggVoice(2 * time.Second)
	files.add("v3", short)
	tg.sayVoice(t, alice, 1001, "v3", len(short), 2)
	waitTexts("the hint for the refused note", "Noted: oat milk.", protocol.HintRecordingTooLong, "I could not listen to that one.",
		protocol.HintTranscriptionFailed, "I could not listen to that one.")
	require.Equal(t, 2, transcriptions())
	require.NotContains(t, logs.String(), "gsk-test", "the transcription key is never logged")
}
