package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// pngImage is the smallest PNG: its signature and header are what matters here.
var pngImage = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{1}, 100)...)

func TestFilesAreSavedAsMediaAndServedSafely(t *testing.T) {
	c, p, base := startChannel(t, "")
	a := postForm(t, base+"/api/send", field("chat", "f1"), field("text", "look"),
		formPart{name: "file", fileName: "../Screen shot (1).png", contentType: "image/png", body: pngImage},
		formPart{name: "file", fileName: "notes.html", contentType: "text/html", body: []byte("<script>alert(1)</script>")})
	require.Equal(t, http.StatusOK, a.status, a.body)
	var got struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(a.body), &got))
	msg := p.all()[0]
	dir := filepath.Join(c.workspace, "media")
	require.Equal(t, []string{filepath.Join(dir, got.ID+"-1-Screen_shot_1_.png"), filepath.Join(dir, got.ID+"-2-notes.html")}, msg.Media,
		"saved under <workspace>/media with safe names, in order")

	img := call(t, http.MethodGet, base+"/api/media?name="+filepath.Base(msg.Media[0]), "")
	require.Equal(t, http.StatusOK, img.status)
	require.Equal(t, "image/png", img.header.Get("Content-Type"))
	require.Equal(t, string(pngImage), img.body)
	page := call(t, http.MethodGet, base+"/api/media?name="+filepath.Base(msg.Media[1]), "")
	require.Equal(t, http.StatusOK, page.status)
	require.Equal(t, "application/octet-stream", page.header.Get("Content-Type"), "an uploaded page never runs in the chat's origin")
	require.Contains(t, page.header.Get("Content-Disposition"), "attachment")
	require.Contains(t, page.header.Get("Content-Security-Policy"), "sandbox")
	for _, bad := range []string{"../config.json", ".hidden", "a/b", ""} {
		require.Equal(t, http.StatusBadRequest, call(t, http.MethodGet, base+"/api/media?name="+bad, "").status, bad)
	}
	require.Equal(t, http.StatusNotFound, call(t, http.MethodGet, base+"/api/media?name=missing.png", "").status)
}

func TestBadFilesAreRefusedAndNothingKept(t *testing.T) {
	c, p, base := startChannel(t, "")
	good := formPart{name: "file", fileName: "a.txt", contentType: "text/plain", body: []byte("fine")}
	cases := []struct {
		name   string
		parts  []formPart
		status int
		want   string
	}{
		{"not an image", []formPart{good, {name: "file", fileName: "x.png", contentType: "image/png", body: []byte("plain text")}}, 415, "an image must be JPEG, PNG, GIF or WebP"},
		{"empty", []formPart{good, {name: "file", fileName: "e.txt", body: nil}}, 400, "e.txt is empty"},
		{"too large", []formPart{good, {name: "file", fileName: "big.bin", body: bytes.Repeat([]byte{1}, maxFile+1)}}, 413, "big.bin is larger than 20 MB"},
		{"too many", append(make([]formPart, 0), good, good, good, good, good, good, good, good, good), 413, "at most 8 files"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := postForm(t, base+"/api/send", append([]formPart{field("chat", "f2")}, tc.parts...)...)
			require.Equal(t, tc.status, a.status, a.body)
			require.Contains(t, a.body, tc.want)
		})
	}
	require.Empty(t, p.all())
	require.Empty(t, mediaFiles(t, c), "nothing kept of a refused message")
}

func TestHistoryDrawsAMessagesFiles(t *testing.T) {
	text, files := splitMedia("what is this?\n[image: /w/media/web-1-1-cat.png]\n[file: /w/media/web-1-2-notes.txt]\n[image: /etc/../x y]")
	require.Equal(t, "what is this?\n[image: /etc/../x y]", text, "only media names are drawn as files")
	require.Equal(t, []mediaView{{Kind: "image", Name: "web-1-1-cat.png"}, {Kind: "file", Name: "web-1-2-notes.txt"}}, files)
}
