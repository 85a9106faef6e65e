package channels

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/protocol"
)

// TestSafeFileNameCannotLeaveMedia: a sender's name keeps its last element,
// safe characters and its end; what could climb out of media/ is gone.
func TestSafeFileNameCannotLeaveMedia(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":            "report.pdf",
		"../../etc/passwd":      "passwd",
		`C:\Users\ann\cv 1.doc`: "cv_1.doc",
		"..":                    "",
		"":                      "",
		"._hidden.":             "hidden",
		"Grüße aus Köln.txt":    "Grüße_aus_Köln.txt",
		"报告 (最终).pdf":           "报告_最终_.pdf",
	} {
		require.Equal(t, want, SafeFileName(in, 64), in)
	}
	long := strings.Repeat("a", 100) + ".tar.gz"
	require.Equal(t, strings.Repeat("a", 9)+".tar.gz", SafeFileName(long, 16), "the end, with the extension, is kept")
	require.Equal(t, "ö.txt", SafeFileName("ööööö.txt", 5), "cut by characters, not bytes")
	require.Equal(t, "AgAD-x_1.y", SafeID("AgAD/-x_1.y?"))
}

// TestWithNotes: notes go below the text, one a line; none leave it as it is.
func TestWithNotes(t *testing.T) {
	require.Equal(t, " hi ", WithNotes(" hi ", nil))
	require.Equal(t, "hi\n[attachment: a.pdf - too large]", WithNotes("hi", []string{FileNote("a.pdf", "too large")}))
	require.Equal(t, "[attachment: b - download failed]", WithNotes("", []string{FileNote("b", "download failed")}))
}

// TestFileKindAndLine: a MIME type's first part names image, audio and
// video; anything else, or nothing, is a file; the line names it.
func TestFileKindAndLine(t *testing.T) {
	for in, want := range map[string]string{
		"image/png": "image", "audio/ogg": "audio", "video/mp4": "video",
		"application/pdf": "file", "text/plain": "file", "": "file", "imagery": "file",
	} {
		require.Equal(t, want, FileKind(in), in)
	}
	require.Equal(t, "[audio: /ws/media/a.ogg]", FileLine(FileKind("audio/ogg"), "/ws/media/a.ogg"))
	require.Equal(t, "[image: download failed]", FileLine("image", "download failed"))
}

// TestSendFileSaysWhatDidNotGo: a link is sent as text, a file within the
// limit is uploaded; a missing or too large file, or one the platform
// refuses for good, becomes a line naming it; a refusal that may pass
// later is returned for delivery to retry.
func TestSendFileSaysWhatDidNotGo(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "small.txt"), []byte("hi"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "big.bin"), make([]byte, 64), 0o600))
	var sent []string
	text := func(s string) (string, error) { sent = append(sent, "text "+s); return "t", nil }
	uploadWith := func(err error) func(string) (string, error) {
		return func(path string) (string, error) { sent = append(sent, "file "+filepath.Base(path)); return "f", err }
	}
	send := func(ref string, err error) (string, error) {
		return SendFile(slog.New(slog.DiscardHandler), ws, ref, 16, uploadWith(err), text)
	}
	id, err := send("https://example.com/a.png", nil)
	require.NoError(t, err)
	require.Equal(t, "t", id)
	id, err = send("small.txt", nil)
	require.NoError(t, err)
	require.Equal(t, "f", id)
	_, err = send("missing.txt", nil)
	require.NoError(t, err)
	_, err = send("big.bin", nil)
	require.NoError(t, err)
	_, err = send("small.txt", &SendError{Err: errors.New("refused"), Permanent: true})
	require.NoError(t, err)
	later := errors.New("HTTP 503")
	_, err = send("small.txt", later)
	require.ErrorIs(t, err, later)
	require.Equal(t, []string{
		"text https://example.com/a.png", "file small.txt",
		"text [attachment: missing.txt - send failed]", "text [attachment: big.bin - send failed]",
		"file small.txt", "text [attachment: small.txt - send failed]", "file small.txt",
	}, sent)
}

// TestSendFileSayingUsesTheChannelsLine: a file that did not go is named
// in the channel's own words.
func TestSendFileSayingUsesTheChannelsLine(t *testing.T) {
	var sent []string
	text := func(s string) (string, error) { sent = append(sent, s); return "", nil }
	upload := func(string) (string, error) { t.Fatal("nothing to upload"); return "", nil }
	note := func(name string) string { return "[Attachment send failed: " + name + "]" }
	_, err := SendFileSaying(slog.New(slog.DiscardHandler), t.TempDir(), "missing.pdf", 16, upload, text, note)
	require.NoError(t, err)
	require.Equal(t, []string{"[Attachment send failed: missing.pdf]"}, sent)
}

// TestTakeFilesMediaAndNotes: each saved file goes to the message's media
// in order, and each one that did not the model reads of under the text.
func TestTakeFilesMediaAndNotes(t *testing.T) {
	msg := protocol.Inbound{Content: "look", Media: []string{"media/earlier.png"}}
	saved := map[string]string{"a": "media/a.png", "c": "media/c.pdf"}
	TakeFiles(t.Context(), &msg, []string{"a", "b", "c"}, func(_ context.Context, id string) (string, string) {
		if path, ok := saved[id]; ok {
			return path, ""
		}
		return "", FileNote(id, "too large")
	})
	require.Equal(t, []string{"media/earlier.png", "media/a.png", "media/c.pdf"}, msg.Media)
	require.Equal(t, "look\n[attachment: b - too large]", msg.Content)

	none := protocol.Inbound{Content: "plain"}
	TakeFiles(t.Context(), &none, nil, func(context.Context, string) (string, string) { return "", "never" })
	require.Equal(t, "plain", none.Content)
	require.Empty(t, none.Media)
}

// TestMediaNameShape: "<channel>-<id>-<name>", safe, with an extension by
// the type when the name has none, and the id's end when it is long.
func TestMediaNameShape(t *testing.T) {
	for _, tc := range []struct{ id, name, mimeType, want string }{
		{"700", "cat.png", "", "discord-700-cat.png"},
		{"m1-0", "../../report.pdf", "image/png", "discord-m1-0-report.pdf"},
		{"m1-2", "", "image/jpeg", "discord-m1-2.jpg"},
		{"m1", "notes", "text/plain; charset=utf-8", "discord-m1-notes.txt"},
		{"m1", "", "", "discord-m1"},
		{"../m/1?", "", "audio/ogg; codecs=opus", "discord-m1.ogg"},
		{strings.Repeat("a", 60) + "-end", "x.bin", "", "discord-" + strings.Repeat("a", 44) + "-end-x.bin"},
	} {
		require.Equal(t, tc.want, MediaName("discord", tc.id, tc.name, tc.mimeType), "%+v", tc)
	}
}

// TestMediaExtPrefersTheUsualOne: the common types get their usual
// extension, others the system's, unknown ones none.
func TestMediaExtPrefersTheUsualOne(t *testing.T) {
	require.Equal(t, ".jpg", MediaExt("image/jpeg"))
	require.Equal(t, ".ogg", MediaExt("audio/ogg; codecs=opus"))
	require.Equal(t, ".json", MediaExt("application/json"))
	require.Equal(t, "", MediaExt("application/x-no-such-type"))
	require.Equal(t, "", MediaExt("not a type;;"))
}

// TestDispositionNameReadsTheHeader: the filename parameter, "" without one.
func TestDispositionNameReadsTheHeader(t *testing.T) {
	h := http.Header{}
	require.Equal(t, "", DispositionName(h))
	h.Set("Content-Disposition", `attachment; filename="q3 report.pdf"`)
	require.Equal(t, "q3 report.pdf", DispositionName(h))
	h.Set("Content-Disposition", `attachment; filename*=UTF-8''%E6%8A%A5%E5%91%8A.pdf`)
	require.Equal(t, "报告.pdf", DispositionName(h))
	h.Set("Content-Disposition", `inline`)
	require.Equal(t, "", DispositionName(h))
}

// TestFetchableURLOnlyThePlatformsOrTheTestServer: https on the platform's
// hosts, or the test server's scheme and host; nothing else.
func TestFetchableURLOnlyThePlatformsOrTheTestServer(t *testing.T) {
	cdn := func(host string) bool { return host == "cdn.example" }
	require.True(t, FetchableURL("https://CDN.example/a.png?sig=1", "", cdn))
	require.False(t, FetchableURL("http://cdn.example/a.png", "", cdn), "not https")
	require.False(t, FetchableURL("https://evil.example/a.png", "", cdn))
	require.True(t, FetchableURL("https://evil.example/a.png", "", nil), "any https host")
	require.True(t, FetchableURL("http://127.0.0.1:9/f", "http://127.0.0.1:9/api", cdn), "the test server")
	require.False(t, FetchableURL("http://127.0.0.1:8/f", "http://127.0.0.1:9/api", cdn), "another port")
	require.False(t, FetchableURL("https://127.0.0.1:9/f", "http://127.0.0.1:9", cdn), "another scheme")
	require.False(t, FetchableURL("/relative", "", nil))
	require.False(t, FetchableURL("://", "", nil))
}

// TestReadMediaSaysWhatIsWrong: a workspace file within the limit is read;
// one missing, a folder or too large is an error naming it and why.
func TestReadMediaSaysWhatIsWrong(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(ws, "dir"), 0o755))
	path, data, err := ReadMedia(ws, "a.txt", 5)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(ws, "a.txt"), path)
	require.Equal(t, "hello", string(data))
	_, data, err = ReadMedia(ws, filepath.Join(ws, "a.txt"), 4)
	require.EqualError(t, err, "a.txt: larger than the platform's upload limit of 4 bytes")
	require.Nil(t, data)
	_, _, err = ReadMedia(ws, "dir", 5)
	require.EqualError(t, err, "dir: not a file")
	_, _, err = ReadMedia(ws, "gone.txt", 5)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "gone.txt: not found")
}

// TestGetFileKeepsTheSignatureOutOfErrors: a 200 answer is handed back; a
// refusal or a failed connection is an error naming the URL without its
// query; a private file gets the authorization asked for, a signed one none.
func TestGetFileKeepsTheSignatureOutOfErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		private := r.URL.Path == "/f/private" && r.Header.Get("Authorization") == "Bearer xoxb"
		if (r.URL.Path != "/f/ok" || r.Header.Get("Authorization") != "") && !private {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, "body")
	}))
	resp, err := GetFile(t.Context(), srv.Client(), srv.URL+"/f/ok?sig=secret", "")
	require.NoError(t, err)
	data, err := ReadLimited(resp.Body, 4)
	require.NoError(t, err)
	require.Equal(t, "body", string(data))
	resp.Body.Close()
	resp, err = GetFile(t.Context(), srv.Client(), srv.URL+"/f/private", "Bearer xoxb")
	require.NoError(t, err)
	resp.Body.Close()

	_, err = GetFile(t.Context(), srv.Client(), srv.URL+"/f/gone?sig=secret", "")
	require.EqualError(t, err, "GET "+srv.URL+"/f/gone: HTTP 404 Not Found")
	srv.Close()
	_, err = GetFile(t.Context(), srv.Client(), srv.URL+"/f/ok?sig=secret", "")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "secret")
	require.Contains(t, err.Error(), "GET "+srv.URL+"/f/ok: ")
}

// TestReadLimitedRefusesMore: up to the limit is read, one byte more is ErrTooLarge.
func TestReadLimitedRefusesMore(t *testing.T) {
	data, err := ReadLimited(strings.NewReader("12345"), 5)
	require.NoError(t, err)
	require.Equal(t, "12345", string(data))
	_, err = ReadLimited(strings.NewReader("123456"), 5)
	require.ErrorIs(t, err, ErrTooLarge)
}

// TestFileTypeByNameThenBytes: the extension decides, the bytes when it cannot.
func TestFileTypeByNameThenBytes(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	require.Equal(t, "application/pdf", FileType("a.pdf", png))
	require.Equal(t, "image/png", FileType("no-extension", png))
	require.Equal(t, "image/png", FileType("a.unknownext", png))
	require.NoError(t, mime.AddExtensionType(".nanobot-octets", "application/octet-stream"))
	require.Equal(t, "image/png", FileType("a.nanobot-octets", png), "octet-stream says nothing: the bytes decide")
	require.Equal(t, "text/plain; charset=utf-8", FileType("notes", []byte("plain words")))
	require.Equal(t, "application/octet-stream", FileType("blob", []byte{0, 1, 2, 0xff}))
}

// TestRedactURLDropsTheSignature: a URL for a log keeps where, not the key.
func TestRedactURLDropsTheSignature(t *testing.T) {
	require.Equal(t, "https://cdn.example/f/1.png", RedactURL("https://cdn.example/f/1.png?sig=secret&exp=1"))
	require.Equal(t, "https://cdn.example/f/1.png", RedactURL("https://cdn.example/f/1.png"))
}
