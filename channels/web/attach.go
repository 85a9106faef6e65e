package web

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/media"
)

// filePart is the form field a picked, pasted or dropped file comes in.
const filePart = "file"

// The web chat's media rules: what one message may carry, as the other
// channels bound a download (channels.SaveMedia's limit).
const (
	maxFile  = 20 << 20
	maxFiles = 8
)

// sentImages are the image types the model is shown (the rest go as files).
var sentImages = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// savedName is a file's name as kept under <workspace>/media: prefix, then
// what is safe of the name the browser gave (a picked file's, or "pasted").
func savedName(prefix, fileName string) string {
	base := channels.SafeFileName(fileName, 80)
	if base == "" {
		base = "file"
	}
	return prefix + "-" + base
}

// saveFile saves a file part as <workspace>/media/<name>-<its name>: at
// most maxFile bytes, and one that says it is an image must be one the model takes.
func (c *Channel) saveFile(part *multipart.Part, name string) (string, int, error) {
	br := bufio.NewReader(part)
	head, err := br.Peek(512)
	if len(head) == 0 {
		if err != nil && !errors.Is(err, io.EOF) {
			return "", readStatus(err), fmt.Errorf("could not read %s: %w", part.FileName(), err)
		}
		return "", http.StatusBadRequest, fmt.Errorf("%s is empty", part.FileName())
	}
	declared := part.Header.Get("Content-Type")
	if strings.HasPrefix(declared, "image/") && !sentImages[http.DetectContentType(head)] {
		return "", http.StatusUnsupportedMediaType, fmt.Errorf("%s: an image must be JPEG, PNG, GIF or WebP", part.FileName())
	}
	return c.saveMedia(savedName(name, part.FileName()), br, maxFile, part.FileName(), fmt.Sprintf("%s is larger than %d MB", part.FileName(), maxFile>>20))
}

// saveMedia keeps an upload as <workspace>/media/<name> (channels.SaveMedia,
// at most limit bytes); what names it in errors, tooLarge says what is over.
func (c *Channel) saveMedia(name string, body io.Reader, limit int64, what, tooLarge string) (string, int, error) {
	path, err := channels.SaveMedia(c.workspace, name, body, limit)
	switch {
	case errors.Is(err, channels.ErrTooLarge):
		return "", http.StatusRequestEntityTooLarge, errors.New(tooLarge)
	case err != nil:
		if status := readStatus(err); status != http.StatusInternalServerError {
			return "", status, fmt.Errorf("could not read %s: %w", what, err)
		}
		c.log.Error("saving a web upload failed", "file", name, "error", err)
		return "", http.StatusInternalServerError, fmt.Errorf("could not save %s: %w", what, err)
	}
	return path, http.StatusOK, nil
}

func removeAll(paths []string) {
	for _, p := range paths {
		_ = os.Remove(p)
	}
}

// mediaNames are what /api/media serves: a plain name in <workspace>/media.
var mediaNames = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$`)

// serveMedia answers a file of <workspace>/media by name: an image the model
// takes is shown inline, anything else only downloads (an uploaded page must not run here).
func (c *Channel) serveMedia(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if !mediaNames.MatchString(name) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("media %q: want a file name of <workspace>/media", name))
		return
	}
	f, err := os.Open(filepath.Join(media.Dir(c.workspace), name))
	if err != nil {
		writeError(w, http.StatusNotFound, "no media "+name)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		writeError(w, http.StatusNotFound, "no media "+name)
		return
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	if ct := http.DetectContentType(head[:n]); sentImages[ct] {
		h.Set("Content-Type", ct)
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	}
	http.ServeContent(w, r, "", st.ModTime(), f)
}
