package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/transcription"
)

// transcriptsData is the turn data holding a message's transcripts: written
// once, so a retried activity (or BUILD) reads them instead of calling again.
const transcriptsData = "transcripts"

// Transcriber turns a message's voice notes into text with the worker's
// config; the provider key never leaves the worker.
type Transcriber struct {
	journal
	config func() *config.Config
	http   *http.Client
	media  media.Store // the voice notes, fetched to this host
	getenv func(string) string
	log    *slog.Logger
}

// Transcribe transcribes every audio file of the turn's message and
// journals the outcome once. A provider error that may pass (connection,
// 408, 429, 5xx) fails the attempt so Temporal retries it; anything else
// becomes a hint for the user.
func (a *Transcriber) Transcribe(ctx context.Context, in protocol.StepInput) (protocol.TranscribeResult, error) {
	if raw, err := a.store.TurnData(ctx, in.SessionKey, in.Turn, transcriptsData); err == nil {
		var res protocol.TranscribeResult
		if err := json.Unmarshal(raw, &res); err == nil {
			return res, nil
		}
	}
	s, cfgErr := transcription.Resolve(a.config(), a.getenv)
	var res protocol.TranscribeResult
	for _, ref := range in.Message.Media {
		if !protocol.IsAudio(ref) {
			continue
		}
		t := protocol.Transcript{Path: ref} // by ref: BUILD reads the note at its own path
		if cfgErr != nil {
			a.log.Warn("voice note not transcribed", "session", in.SessionKey, "error", cfgErr)
			t.Detail = "not_configured"
		} else if err := a.transcribe(ctx, s, &t); err != nil {
			return protocol.TranscribeResult{}, err
		}
		switch t.Detail {
		case "", "disabled": // switched off on purpose: the model reads "[voice: path]", nobody is told
		case "duration":
			t.Hint = protocol.HintRecordingTooLong
		case "not_configured":
			t.Hint = protocol.HintNotConfigured
		default:
			t.Hint = protocol.HintTranscriptionFailed
		}
		if t.Hint != "" && !slices.Contains(res.Hints, t.Hint) {
			res.Hints = append(res.Hints, t.Hint)
		}
		res.Transcripts = append(res.Transcripts, t)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return protocol.TranscribeResult{}, fmt.Errorf("encode transcripts: %w", err)
	}
	if err := a.store.PutTurnData(ctx, in.SessionKey, in.Turn, transcriptsData, raw); err != nil {
		return protocol.TranscribeResult{}, fmt.Errorf("journal transcripts: %w", err)
	}
	return res, nil
}

// transcribe fills t.Text, or t.Detail with nanobot's reason; an error only
// for a failure worth retrying.
func (a *Transcriber) transcribe(ctx context.Context, s transcription.Settings, t *protocol.Transcript) error {
	switch {
	case !s.Enabled:
		t.Detail = "disabled"
		return nil
	case !s.Configured():
		t.Detail = "not_configured"
		a.log.Warn("voice note not transcribed: no API key", "provider", s.Provider.Name, "key", "providers."+s.Provider.Name+".apiKey")
		return nil
	}
	paths, err := media.LocalAll(ctx, a.media, []string{t.Path})
	if err != nil {
		return fmt.Errorf("fetch voice note: %w", err)
	}
	path := paths[0]
	st, err := os.Stat(path)
	switch {
	case err != nil:
		t.Detail = "failed"
		a.log.Warn("voice note not transcribed", "file", path, "error", err)
		return nil
	case st.Size() > s.MaxUploadBytes:
		t.Detail = "size"
		return nil
	}
	if d, ok := transcription.Duration(path); ok && d > time.Duration(s.MaxDurationSec)*time.Second+time.Second {
		t.Detail = "duration" // nanobot allows a second over the limit
		return nil
	}
	text, err := transcription.Transcribe(ctx, a.http, s, path)
	var te *transcription.Error
	switch {
	case err != nil && errors.As(err, &te) && te.Retryable && activity.GetInfo(ctx).Attempt < protocol.TranscribeAttempts:
		return temporal.NewApplicationErrorWithCause("transcription failed, retrying", "TranscriptionRetryable", err)
	case err != nil:
		t.Detail = "failed"
		a.log.Warn("voice note not transcribed", "file", path, "provider", s.Provider.Name, "error", err)
	case text == "":
		t.Detail = "empty"
	default:
		t.Text = text
	}
	return nil
}

// transcripts reads a turn's journaled transcripts, by path (none: no audio, or no TRANSCRIBE).
func (j journal) transcripts(ctx context.Context, key, turn string, media []string) map[string]protocol.Transcript {
	if len(media) == 0 { // nothing was transcribed: spare the store a read
		return nil
	}
	raw, err := j.store.TurnData(ctx, key, turn, transcriptsData)
	if err != nil {
		return nil
	}
	var res protocol.TranscribeResult
	if json.Unmarshal(raw, &res) != nil {
		return nil
	}
	out := make(map[string]protocol.Transcript, len(res.Transcripts))
	for _, t := range res.Transcripts {
		out[t.Path] = t
	}
	return out
}
