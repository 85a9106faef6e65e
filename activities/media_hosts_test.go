package activities

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/internal/pgtest"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/pgstore"
)

// TestFilesOfAnotherHostAreReadFromTheDatabase: a gateway's voice note and
// photo, shared through PostgreSQL, are transcribed and built on a host
// whose own workspace lacks them: the transcript reaches the model, and the
// photo is inlined and named by its copy in this workspace's media/.
func TestFilesOfAnotherHostAreReadFromTheDatabase(t *testing.T) {
	ctx := context.Background()
	db, err := pgstore.Open(ctx, pgtest.Database(t), nil)
	require.NoError(t, err)
	defer db.Close()
	gatewayWS := t.TempDir()
	gateway := db.Media("default", gatewayWS, media.Dir(gatewayWS))
	note := voiceNote(t, gatewayWS, "telegram-AgAD-voice.ogg", 4*time.Second)
	photo := filepath.Join(gatewayWS, "media", "telegram-AgAE-photo.png")
	writePNG(t, photo)
	require.NoError(t, media.ShareAll(ctx, gateway, []string{note, photo}))
	noteBytes, err := os.ReadFile(note)
	require.NoError(t, err)
	photoBytes, err := os.ReadFile(photo)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(gatewayWS)) // the gateway's disk is not this host's
	var heard atomic.Int32
	whisper := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got, _ := io.ReadAll(f)
		if string(got) != string(noteBytes) {
			http.Error(w, "not the voice note", http.StatusBadRequest)
			return
		}
		heard.Add(1)
		_, _ = io.WriteString(w, `{"text":"Remind me to buy oat milk."}`)
	}))
	defer whisper.Close()
	a := newActivities(t, nil)
	cfg := config.Default()
	cfg.Providers["groq"] = config.ProviderConfig{APIKey: "gsk-test", APIBase: whisper.URL + "/v1"}
	a.Config = func() *config.Config { return cfg }
	a.Media = db.Media("default", a.Workspace, media.Dir(a.Workspace))
	in := step("t1", "look")
	in.Message.Media = []string{note, photo}
	res, err := runTranscribe(t, a, in)
	require.NoError(t, err)
	require.Equal(t, "Remind me to buy oat milk.", res.Transcripts[0].Text)
	require.Equal(t, int32(1), heard.Load(), "the provider got the note's bytes")

	_, err = a.set().Turn.Build(ctx, in)
	require.NoError(t, err)
	copied := filepath.Join(a.Workspace, "media", "telegram-AgAE-photo.png")
	user := userEntry(t, a, "t1")
	require.Equal(t, "look\n[transcription: Remind me to buy oat milk.]\n[image: "+copied+"]", user.Content)
	require.Contains(t, string(user.ContentParts), `"url":"data:image/png;base64,`)
	got, err := os.ReadFile(copied)
	require.NoError(t, err)
	require.Equal(t, photoBytes, got)
}
