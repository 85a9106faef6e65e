package activities

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/aimocktest"
)

// voiceNote writes an Ogg Opus file into the workspace's media/ that lasts d.
func voiceNote(t *testing.T, ws, name string, d time.Duration) string {
	t.Helper()
	page := func(granule uint64, body string) []byte {
		b := make([]byte, 27)
		copy(b, "OggS")
		binary.LittleEndian.PutUint64(b[6:14], granule)
		return append(b, body...)
	}
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "media"), 0o755))
	path := filepath.Join(ws, "media", name)
	require.NoError(t, os.WriteFile(path, append(page(0, "OpusHead\x01\x01"), page(uint64(d/time.Second)*48000, "audio")...), 0o644))
	return path
}

func transcribeRig(t *testing.T, model string) (*rig, *aimocktest.Server) {
	t.Helper()
	srv := aimocktest.Start(t, aimocktest.Fixtures(t,
		map[string]any{"match": map[string]any{"endpoint": "transcription", "model": "whisper-large-v3"},
			"response": map[string]any{"transcription": map[string]any{"text": "Remind me to buy oat milk."}}},
		map[string]any{"match": map[string]any{"endpoint": "transcription", "model": "bad-key"},
			"response": map[string]any{"error": map[string]any{"message": "Invalid API Key", "type": "invalid_request_error"}, "status": 401}},
		map[string]any{"match": map[string]any{"endpoint": "transcription", "model": "busy"},
			"response": map[string]any{"error": map[string]any{"message": "overloaded", "type": "server_error"}, "status": 503}},
	))
	a := newActivities(t, nil)
	cfg := config.Default()
	cfg.Transcription.Model, cfg.Transcription.MaxDurationSec = model, 60
	cfg.Providers["groq"] = config.ProviderConfig{APIKey: "gsk-test", APIBase: srv.URL() + "/v1"}
	a.Config = func() *config.Config { return cfg }
	return a, srv
}

func runTranscribe(t *testing.T, a *rig, in protocol.StepInput) (protocol.TranscribeResult, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.set().Transcriber.Transcribe, activity.RegisterOptions{Name: protocol.ActivityTranscribe})
	val, err := env.ExecuteActivity(protocol.ActivityTranscribe, in)
	if err != nil {
		return protocol.TranscribeResult{}, err
	}
	var res protocol.TranscribeResult
	require.NoError(t, val.Get(&res))
	return res, nil
}

func userEntry(t *testing.T, a *rig, turn string) chat.Message {
	t.Helper()
	sess, err := a.load(context.Background(), "cli:t")
	require.NoError(t, err)
	i := sess.Find(turn, "user")
	require.GreaterOrEqual(t, i, 0)
	return sess.Messages[i]
}

// TestTranscribeJournalsOnceAndBuildShowsTheText: the model reads the
// transcription with nanobot's marker, the file stays in media/, and a
// retry finds the journaled transcript instead of calling the provider again.
func TestTranscribeJournalsOnceAndBuildShowsTheText(t *testing.T) {
	a, srv := transcribeRig(t, "")
	note := voiceNote(t, a.Workspace, "telegram-AgAD-voice.ogg", 4*time.Second)
	in := step("t1", "")
	in.Message.Media = []string{note}

	res, err := runTranscribe(t, a, in)
	require.NoError(t, err)
	require.Empty(t, res.Hints)
	require.Equal(t, "Remind me to buy oat milk.", res.Transcripts[0].Text)
	again, err := runTranscribe(t, a, in)
	require.NoError(t, err)
	require.Equal(t, res, again)
	require.Len(t, srv.Requests(), 1, "the retry read the journal")

	_, err = a.set().Turn.Build(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, "[transcription: Remind me to buy oat milk.]", userEntry(t, a, "t1").Content)
	require.FileExists(t, note, "the original stays in media/")
}

// TestTranscribeHints: an over-long note is not sent; a refused call and a
// missing key give nanobot's hints, and the model sees "[voice: path]".
func TestTranscribeHints(t *testing.T) {
	a, srv := transcribeRig(t, "")
	long := voiceNote(t, a.Workspace, "long-voice.ogg", 90*time.Second)
	in := step("t1", "listen")
	in.Message.Media = []string{long}
	res, err := runTranscribe(t, a, in)
	require.NoError(t, err)
	require.Equal(t, []string{protocol.HintRecordingTooLong}, res.Hints)
	require.Equal(t, "duration", res.Transcripts[0].Detail)
	require.Empty(t, srv.Requests(), "an over-long note is not uploaded")
	_, err = a.set().Turn.Build(context.Background(), in)
	require.NoError(t, err)
	require.Equal(t, "listen\n[voice: "+long+"]", userEntry(t, a, "t1").Content)

	bad, _ := transcribeRig(t, "bad-key")
	in = step("t2", "")
	in.Message.Media = []string{voiceNote(t, bad.Workspace, "v.ogg", 2*time.Second)}
	res, err = runTranscribe(t, bad, in)
	require.NoError(t, err)
	require.Equal(t, []string{protocol.HintTranscriptionFailed}, res.Hints)

	busy, _ := transcribeRig(t, "busy")
	in.Message.Media = []string{voiceNote(t, busy.Workspace, "v.ogg", 2*time.Second)}
	_, err = runTranscribe(t, busy, in)
	require.ErrorContains(t, err, "transcription failed, retrying", "a 503 is left to Temporal's retries")

	off, _ := transcribeRig(t, "")
	off.Config().Transcription.Enabled = false
	in.Message.Media = []string{voiceNote(t, off.Workspace, "v.ogg", 2*time.Second)}
	res, err = runTranscribe(t, off, in)
	require.NoError(t, err)
	require.Empty(t, res.Hints, "switched off: no hint")
	require.Equal(t, "disabled", res.Transcripts[0].Detail)

	nokey, _ := transcribeRig(t, "")
	cfg := nokey.Config()
	cfg.Providers["groq"] = config.ProviderConfig{}
	t.Setenv("GROQ_API_KEY", "")
	in.Message.Media = []string{voiceNote(t, nokey.Workspace, "v.ogg", 2*time.Second)}
	res, err = runTranscribe(t, nokey, in)
	require.NoError(t, err)
	require.Equal(t, []string{protocol.HintNotConfigured}, res.Hints)
}
