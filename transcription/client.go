package transcription

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers"
)

// Settings is the resolved transcription setup: the config block plus the
// provider's key and endpoint (nanobot's resolve_transcription_config).
type Settings struct {
	Enabled        bool
	Provider       Provider
	Model          string
	Language       string
	APIKey         string
	APIBase        string
	MaxDurationSec int
	MaxUploadBytes int64
}

// Resolve reads cfg.transcription and providers.<provider>; the key falls
// back to the provider's environment variable, the base to its default.
func Resolve(cfg *config.Config, getenv func(string) string) (Settings, error) {
	t := cfg.Transcription
	if t.Provider == "" { // nanobot's legacy channels.* keys come second
		t.Provider = cfg.Channels.TranscriptionProvider
	}
	if t.Language == "" {
		t.Language = cfg.Channels.TranscriptionLanguage
	}
	p, ok := Lookup(t.Provider)
	if !ok {
		return Settings{}, fmt.Errorf("transcription.provider %q: not one that speaks the OpenAI audio API (%s)", t.Provider, strings.Join(Names(), ", "))
	}
	s := Settings{
		Enabled: t.Enabled, Provider: p, Model: strings.TrimSpace(t.Model), Language: t.Language,
		MaxDurationSec: t.MaxDurationSec, MaxUploadBytes: int64(t.MaxUploadMB) << 20,
	}
	if s.Model == "" {
		s.Model = p.DefaultModel
	}
	pc := cfg.Providers[p.Name]
	s.APIKey, s.APIBase = pc.APIKey, strings.TrimRight(pc.APIBase, "/")
	if spec, ok := providers.LookupSpec(p.Name); ok {
		if s.APIKey == "" && spec.EnvKey != "" {
			s.APIKey = getenv(spec.EnvKey)
		}
		if s.APIBase == "" {
			s.APIBase = spec.DefaultAPIBase
		}
	}
	s.APIBase = strings.TrimSuffix(s.APIBase, "/audio/transcriptions") // a full endpoint copied in works too, as in nanobot
	return s, nil
}

// Configured: a key is there to call the provider with.
func (s Settings) Configured() bool { return s.APIKey != "" }

// Error is a failed call; Retryable says whether trying again may help
// (connection errors, 408, 429, 5xx).
type Error struct {
	Status    int
	Retryable bool
	Err       error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Transcribe sends the file to the provider and returns the text.
func Transcribe(ctx context.Context, hc *http.Client, s Settings, path string) (string, error) {
	if s.Provider.JSONBody {
		return transcribeJSON(ctx, hc, s, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", &Error{Err: fmt.Errorf("read audio: %w", err)}
	}
	defer f.Close()
	oc := openai.DefaultConfig(s.APIKey)
	oc.BaseURL = s.APIBase
	oc.HTTPClient = hc
	res, err := openai.NewClientWithConfig(oc).CreateTranscription(ctx, openai.AudioRequest{
		// the file's name only: the worker's paths are not the provider's business
		Model: s.Model, FilePath: filepath.Base(path), Reader: f, Language: s.Language, Format: openai.AudioResponseFormatJSON,
	})
	if err != nil {
		return "", classify(s.Provider.Name, err)
	}
	return strings.TrimSpace(res.Text), nil
}

func classify(provider string, err error) error {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	status := 0
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	default: // no answer at all: a connection error or a timeout
		return &Error{Retryable: true, Err: fmt.Errorf("%s transcription: %w", provider, err)}
	}
	return &Error{Status: status, Retryable: retryableStatus(status), Err: fmt.Errorf("%s transcription: HTTP %d: %w", provider, status, err)}
}

func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// transcribeJSON is OpenRouter's form: the audio base64 with its format.
func transcribeJSON(ctx context.Context, hc *http.Client, s Settings, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", &Error{Err: fmt.Errorf("read audio: %w", err)}
	}
	body := map[string]any{"model": s.Model, "input_audio": map[string]string{
		"data": base64.StdEncoding.EncodeToString(data), "format": audioFormat(path),
	}}
	if s.Language != "" {
		body["language"] = s.Language
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return "", &Error{Err: err}
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, s.APIBase+"/audio/transcriptions", bytes.NewReader(raw))
	if err != nil {
		return "", &Error{Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+s.APIKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return "", &Error{Retryable: true, Err: fmt.Errorf("%s transcription: %w", s.Provider.Name, err)}
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", &Error{Status: resp.StatusCode, Retryable: retryableStatus(resp.StatusCode),
			Err: fmt.Errorf("%s transcription: HTTP %d: %.300s", s.Provider.Name, resp.StatusCode, out)}
	}
	var res struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return "", &Error{Err: fmt.Errorf("%s transcription: malformed response: %w", s.Provider.Name, err)}
	}
	return strings.TrimSpace(res.Text), nil
}

// audioFormat maps an extension to OpenRouter's format names, as nanobot does.
func audioFormat(path string) string {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	switch ext {
	case "oga", "opus":
		return "ogg"
	case "mpga", "mpeg":
		return "mp3"
	case "mp4":
		return "m4a"
	}
	return ext
}

// Describe is the one status line: what a voice note goes to, or why not.
func Describe(cfg *config.Config, getenv func(string) string) string {
	s, err := Resolve(cfg, getenv)
	switch {
	case err != nil:
		return "off (" + err.Error() + ")"
	case !s.Enabled:
		return "off (transcription.enabled is false)"
	case !s.Configured():
		return fmt.Sprintf("%s %s, no key (set providers.%s.apiKey): voice notes get %q", s.Provider.Name, s.Model, s.Provider.Name, protocol.HintNotConfigured)
	}
	return fmt.Sprintf("%s %s at %s, at most %d s and %d MB", s.Provider.Name, s.Model, s.APIBase, s.MaxDurationSec, s.MaxUploadBytes>>20)
}
