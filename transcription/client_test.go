package transcription_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers/aimocktest"
	"github.com/nanobot-durable/nanobot/transcription"
)

// oggOpus writes a minimal Ogg Opus file whose last page says it lasts d.
func oggOpus(t *testing.T, d time.Duration) string {
	t.Helper()
	page := func(granule uint64, body string) []byte {
		b := make([]byte, 27)
		copy(b, "OggS")
		binary.LittleEndian.PutUint64(b[6:14], granule)
		return append(b, body...)
	}
	data := append(page(0, "OpusHead\x01\x01"), page(uint64(d/time.Second)*48000, "audio")...)
	path := filepath.Join(t.TempDir(), "telegram-AgAD-voice.ogg")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

func settings(t *testing.T, srv *aimocktest.Server, model string) transcription.Settings {
	t.Helper()
	cfg := config.Default()
	cfg.Transcription.Model, cfg.Transcription.Language = model, "en"
	cfg.Providers["groq"] = config.ProviderConfig{APIKey: "gsk-test", APIBase: srv.URL() + "/v1"}
	s, err := transcription.Resolve(cfg, func(string) string { return "" })
	require.NoError(t, err)
	return s
}

// TestTranscribeAtTheWire sends a voice note to aimock's
// /v1/audio/transcriptions as the Whisper API takes it: multipart with the
// file, the model and the language hint, the key as a bearer token.
func TestTranscribeAtTheWire(t *testing.T) {
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"endpoint": "transcription", "model": "whisper-large-v3"},
			"response": map[string]any{"transcription": map[string]any{"text": " Remind me to buy oat milk. "}}},
		map[string]any{"match": map[string]any{"endpoint": "transcription", "model": "bad-key"},
			"response": map[string]any{"error": map[string]any{"message": "Invalid API Key", "type": "invalid_request_error"}, "status": 401}},
		map[string]any{"match": map[string]any{"endpoint": "transcription", "model": "busy"},
			"response": map[string]any{"error": map[string]any{"message": "overloaded", "type": "server_error"}, "status": 503}},
	))
	note := oggOpus(t, 3*time.Second)
	hc := &http.Client{Timeout: 10 * time.Second}

	s := settings(t, srv, "")
	require.Equal(t, "whisper-large-v3", s.Model, "groq's default model")
	text, err := transcription.Transcribe(context.Background(), hc, s, note)
	require.NoError(t, err)
	require.Equal(t, "Remind me to buy oat milk.", text)
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	require.Equal(t, "/v1/audio/transcriptions", r.Path)
	require.Equal(t, "Bearer gsk-test", r.Header.Get("Authorization"))
	require.Contains(t, r.Header.Get("Content-Type"), "multipart/form-data")
	require.Contains(t, string(r.Body), `name="file"; filename="telegram-AgAD-voice.ogg"`)
	require.Contains(t, string(r.Body), "OpusHead")
	require.Contains(t, string(r.Body), "name=\"language\"\r\n\r\nen")

	_, err = transcription.Transcribe(context.Background(), hc, settings(t, srv, "bad-key"), note)
	var te *transcription.Error
	require.True(t, errors.As(err, &te), "%v", err)
	require.Equal(t, 401, te.Status)
	require.False(t, te.Retryable, "a bad key is not retried")

	_, err = transcription.Transcribe(context.Background(), hc, settings(t, srv, "busy"), note)
	require.True(t, errors.As(err, &te), "%v", err)
	require.True(t, te.Retryable, "a 503 is retried")
}

func TestResolveRefusesAProviderWithoutTheAudioAPI(t *testing.T) {
	cfg := config.Default()
	cfg.Transcription.Provider = "assemblyai"
	_, err := transcription.Resolve(cfg, os.Getenv)
	require.ErrorContains(t, err, `transcription.provider "assemblyai"`)

	cfg.Transcription.Provider = "OpenAI"
	s, err := transcription.Resolve(cfg, func(k string) string { return map[string]string{"OPENAI_API_KEY": "sk-env"}[k] })
	require.NoError(t, err)
	require.Equal(t, "whisper-1", s.Model)
	require.Equal(t, "sk-env", s.APIKey, "the key falls back to the provider's variable")
	require.Equal(t, "https://api.openai.com/v1", s.APIBase)
}

func TestDuration(t *testing.T) {
	d, ok := transcription.Duration(oggOpus(t, 150*time.Second))
	require.True(t, ok)
	require.Equal(t, 150*time.Second, d)
	_, ok = transcription.Duration(filepath.Join(t.TempDir(), "missing.ogg"))
	require.False(t, ok)
}

// TestOpenRouterSendsJSON: OpenRouter takes the audio base64 in a JSON body
// (nanobot's input_audio form), which aimock's multipart reader cannot
// check, so a recording server stands in at the wire.
func TestOpenRouterSendsJSON(t *testing.T) {
	var got struct {
		Model      string `json:"model"`
		Language   string `json:"language"`
		InputAudio struct {
			Data   string `json:"data"`
			Format string `json:"format"`
		} `json:"input_audio"`
	}
	var path, auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, auth = r.URL.Path, r.Header.Get("Authorization")
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		_, _ = w.Write([]byte(`{"text":"hello from openrouter"}`))
	}))
	defer srv.Close()
	cfg := config.Default()
	cfg.Transcription.Provider, cfg.Transcription.Language = "openrouter", "de"
	cfg.Providers["openrouter"] = config.ProviderConfig{APIKey: "sk-or-test", APIBase: srv.URL + "/api/v1/audio/transcriptions"}
	s, err := transcription.Resolve(cfg, os.Getenv)
	require.NoError(t, err)
	note := oggOpus(t, 2*time.Second)
	text, err := transcription.Transcribe(context.Background(), srv.Client(), s, note)
	require.NoError(t, err)
	require.Equal(t, "hello from openrouter", text)
	require.Equal(t, "/api/v1/audio/transcriptions", path, "a full endpoint in apiBase is used as it is")
	require.Equal(t, "Bearer sk-or-test", auth)
	require.Equal(t, "openai/whisper-1", got.Model)
	require.Equal(t, "de", got.Language)
	require.Equal(t, "ogg", got.InputAudio.Format)
	raw, err := os.ReadFile(note)
	require.NoError(t, err)
	require.Equal(t, base64.StdEncoding.EncodeToString(raw), got.InputAudio.Data)
}

func TestDescribe(t *testing.T) {
	none := func(string) string { return "" }
	cfg := config.Default()
	require.Equal(t, `groq whisper-large-v3, no key (set providers.groq.apiKey): voice notes get "Configure a transcription provider first."`, transcription.Describe(cfg, none))
	cfg.Providers["groq"] = config.ProviderConfig{APIKey: "gsk"}
	require.Equal(t, "groq whisper-large-v3 at https://api.groq.com/openai/v1, at most 120 s and 25 MB", transcription.Describe(cfg, none))
	cfg.Transcription.Enabled = false
	require.Equal(t, "off (transcription.enabled is false)", transcription.Describe(cfg, none))
}

// TestResolveReadsTheLegacyChannelKeys: channels.transcriptionProvider and
// .transcriptionLanguage count when the transcription block leaves them empty.
func TestResolveReadsTheLegacyChannelKeys(t *testing.T) {
	cfg := config.Default()
	cfg.Channels.TranscriptionProvider, cfg.Channels.TranscriptionLanguage = "openai", "fr"
	s, err := transcription.Resolve(cfg, os.Getenv)
	require.NoError(t, err)
	require.Equal(t, "openai", s.Provider.Name)
	require.Equal(t, "fr", s.Language)
	cfg.Transcription.Provider, cfg.Transcription.Language = "groq", "en"
	s, err = transcription.Resolve(cfg, os.Getenv)
	require.NoError(t, err)
	require.Equal(t, "groq", s.Provider.Name, "the top-level block wins")
	require.Equal(t, "en", s.Language)
}
