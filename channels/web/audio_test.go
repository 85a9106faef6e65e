package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/protocol"
)

// oggNote and wavNote start as their containers do; the rest is filler.
var (
	oggNote = append([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00"), bytes.Repeat([]byte{7}, 500)...)
	wavNote = append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), bytes.Repeat([]byte{0}, 36)...)
)

// startAudioChannel is a web chat whose transcription.maxUploadMb is maxMB.
func startAudioChannel(t *testing.T, maxMB int) (*Channel, *published, string) {
	t.Helper()
	return startChannelWith(t, func(cfg *config.Config) { cfg.Transcription.MaxUploadMB = maxMB })
}

// formPart is one field of a multipart send; a file when fileName is set.
type formPart struct {
	name, fileName, contentType string
	body                        []byte
}

func postForm(t *testing.T, url string, parts ...formPart) answer {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := `form-data; name="` + p.name + `"`
		if p.fileName != "" {
			disp += `; filename="` + p.fileName + `"`
		}
		h.Set("Content-Disposition", disp)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		require.NoError(t, err)
		_, err = w.Write(p.body)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return call(t, http.MethodPost, url, buf.String(), "Content-Type", mw.FormDataContentType())
}

func field(name, value string) formPart { return formPart{name: name, body: []byte(value)} }

// mediaFiles lists what is in <workspace>/media (none when it does not exist).
func mediaFiles(t *testing.T, c *Channel) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(c.workspace, "media"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestVoiceNoteIsSavedAndPublishedAsMedia(t *testing.T) {
	c, p, base := startAudioChannel(t, 25)
	cases := []struct {
		name string
		part formPart
		text string
		ext  string
	}{
		{"recorded ogg, no text", formPart{name: "audio", fileName: "blob", contentType: "audio/ogg;codecs=opus", body: oggNote}, "", ".ogg"},
		{"picked wav by its name", formPart{name: "audio", fileName: "../../etc/x.WAV", contentType: "application/octet-stream", body: wavNote}, "what is this?", ".wav"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := postForm(t, base+"/api/send", field("chat", "v1"), field("text", tc.text), tc.part)
			require.Equal(t, http.StatusOK, a.status, a.body)
			var got struct{ ID, Session string }
			require.NoError(t, json.Unmarshal([]byte(a.body), &got))
			msgs := p.all()
			require.Len(t, msgs, i+1)
			msg := msgs[i]
			require.Equal(t, got.ID, msg.ID)
			require.Equal(t, tc.text, msg.Content)
			require.Equal(t, "v1", msg.Route.ChatID)
			want := filepath.Join(c.workspace, "media", got.ID+tc.ext)
			require.Equal(t, []string{want}, msg.Media, "a generated name, not the client's")
			require.True(t, protocol.HasAudio(msg.Media), "the turn transcribes it")
			b, err := os.ReadFile(want)
			require.NoError(t, err)
			require.Equal(t, tc.part.body, b)
		})
	}
	require.Len(t, mediaFiles(t, c), 2, "no temporary file left")
}

func TestBadVoiceNoteIsRefusedAndNothingKept(t *testing.T) {
	c, p, base := startAudioChannel(t, 1)
	big := append([]byte("OggS"), bytes.Repeat([]byte{1}, 1<<20)...)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	cases := []struct {
		name   string
		path   string
		parts  []formPart
		status int
		want   string
	}{
		{"over maxUploadMb", "/api/send", []formPart{field("chat", "c"), {name: "audio", fileName: "a.ogg", contentType: "audio/ogg", body: big}}, 413, "transcription.maxUploadMb (1 MB)"},
		{"an image labelled ogg", "/api/send", []formPart{field("chat", "c"), {name: "audio", fileName: "a.ogg", contentType: "audio/ogg", body: png}}, 415, "not ogg audio"},
		{"a text file", "/api/send", []formPart{field("chat", "c"), {name: "audio", fileName: "a.txt", contentType: "text/plain", body: []byte("hello")}}, 415, "not audio: type"},
		{"wav bytes named mp3", "/api/send", []formPart{field("chat", "c"), {name: "audio", fileName: "a.mp3", body: wavNote}}, 415, "not mp3 audio"},
		{"empty file", "/api/send", []formPart{field("chat", "c"), {name: "audio", fileName: "a.ogg", contentType: "audio/ogg"}}, 400, "the audio file is empty"},
		{"bad chat after the audio", "/api/send", []formPart{{name: "audio", fileName: "a.ogg", contentType: "audio/ogg", body: oggNote}, field("chat", "../x")}, 400, "want 1–64 letters"},
		{"two notes", "/api/send", []formPart{field("chat", "c"), {name: "audio", fileName: "a.ogg", contentType: "audio/ogg", body: oggNote}, {name: "audio", fileName: "b.ogg", contentType: "audio/ogg", body: oggNote}}, 400, "one audio file"},
		{"unknown field", "/api/send", []formPart{field("chat", "c"), field("image", "x")}, 400, "unknown form field"},
		{"no text, no audio", "/api/send", []formPart{field("chat", "c"), field("text", " ")}, 400, "the message is empty"},
		{"stop takes JSON only", "/api/stop", []formPart{field("chat", "c")}, 415, "send JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := postForm(t, base+tc.path, tc.parts...)
			require.Equal(t, tc.status, a.status, a.body)
			require.Contains(t, a.body, tc.want)
			require.Equal(t, "application/json", a.header.Get("Content-Type"))
		})
	}
	require.Empty(t, p.all())
	require.Empty(t, mediaFiles(t, c), "a refused note leaves nothing in media/")

	t.Run("agent unavailable", func(t *testing.T) {
		p.mu.Lock()
		p.err = errors.New("temporal is restarting")
		p.mu.Unlock()
		a := postForm(t, base+"/api/send", field("chat", "c"), formPart{name: "audio", fileName: "a.ogg", contentType: "audio/ogg", body: oggNote})
		require.Equal(t, http.StatusServiceUnavailable, a.status, a.body)
		require.Empty(t, mediaFiles(t, c))
	})
}

// TestPageSendsTheAudioPart: the page's recorder and file picker post the
// field the handler reads.
func TestPageSendsTheAudioPart(t *testing.T) {
	_, _, base := startAudioChannel(t, 25)
	page := call(t, http.MethodGet, base+"/", "")
	require.Contains(t, page.body, `id="record"`)
	require.Contains(t, page.body, `id="file" type="file" accept="audio/*"`)
	js := call(t, http.MethodGet, base+"/chat.js", "")
	require.Contains(t, js.body, "body.append('"+audioPart+"', audio, fileName)")
}
