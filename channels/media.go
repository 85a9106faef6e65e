package channels

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nanobot-durable/nanobot/protocol"
)

// ErrTooLarge marks a file over a download limit.
var ErrTooLarge = errors.New("too large")

// SaveMedia writes a downloaded file into <workspace>/media under name,
// through a temporary file, so a half-written or oversized download never
// shows up there. It returns the saved path.
func SaveMedia(workspace, name string, body io.Reader, limit int64) (string, error) {
	dir := filepath.Join(workspace, "media")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, io.LimitReader(body, limit+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("save %s: %w", name, err)
	}
	if n > limit {
		return "", fmt.Errorf("over the %d-byte limit: %w", limit, ErrTooLarge)
	}
	dest := filepath.Join(dir, name)
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return "", err
	}
	return dest, nil
}

// FetchMedia downloads url (signed by the platform: no credentials are
// sent) and saves it into <workspace>/media under name, as SaveMedia does.
func FetchMedia(ctx context.Context, hc *http.Client, url, workspace, name string, limit int64) (string, error) {
	resp, err := GetFile(ctx, hc, url, "")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	return SaveMedia(workspace, name, resp.Body, limit)
}

// GetFile GETs a file's URL and hands back a 200 answer; authorization is
// the header a private file needs ("": none, the URL is signed). An error
// names the URL without its query (RedactURL), where a signature would be.
func GetFile(ctx context.Context, hc *http.Client, rawURL, authorization string) (*http.Response, error) {
	op := "GET " + RedactURL(rawURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err == nil {
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		var resp *http.Response
		if resp, err = hc.Do(req); err == nil {
			if resp.StatusCode == http.StatusOK {
				return resp, nil
			}
			resp.Body.Close()
			return nil, fmt.Errorf("%s: HTTP %s", op, resp.Status)
		}
	}
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		err = ue.Err // its text holds the whole URL
	}
	return nil, fmt.Errorf("%s: %w", op, err)
}

// ReadLimited reads body whole, as long as it is at most limit bytes
// (else ErrTooLarge), for a file opened before it is saved (decrypted).
func ReadLimited(body io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("over the %d-byte limit: %w", limit, ErrTooLarge)
	}
	return data, nil
}

// tooLarge is LocalMedia's why for a file over the limit.
const tooLarge = "larger than the platform's upload limit"

// LocalMedia resolves a reply's file (a workspace path, or an absolute
// one) and checks it can be sent: why is "" for a regular file within
// limit bytes, else what is wrong with it (err, if any, says more).
func LocalMedia(workspace, ref string, limit int64) (path, why string, err error) {
	path = WorkspacePath(workspace, ref)
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return path, "not found", err
	case !st.Mode().IsRegular():
		return path, "not a file", nil
	case st.Size() > limit:
		return path, tooLarge, nil
	}
	return path, "", nil
}

// ReadMedia reads a reply's file for upload, checked as LocalMedia checks
// it; the error says what is wrong ("report.pdf: larger than the
// platform's upload limit of 20971520 bytes").
func ReadMedia(workspace, ref string, limit int64) (path string, data []byte, err error) {
	path, why, err := LocalMedia(workspace, ref, limit)
	switch {
	case why == "":
		data, err = os.ReadFile(path)
		return path, data, err
	case err != nil:
		return path, nil, fmt.Errorf("%s: %s: %w", filepath.Base(path), why, err)
	case why == tooLarge:
		return path, nil, fmt.Errorf("%s: %s of %d bytes", filepath.Base(path), why, limit)
	}
	return path, nil, fmt.Errorf("%s: %s", filepath.Base(path), why)
}

// FileType is the MIME type of a file to send: by its name's extension,
// else (none known, or only application/octet-stream) by its first bytes.
func FileType(name string, data []byte) string {
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" && t != "application/octet-stream" {
		return t
	}
	return http.DetectContentType(data)
}

// SendFile sends a reply's file part as nanobot does: a link goes out as
// text; a workspace file (ref) within limit bytes goes to upload; one that
// is missing or too large, or that the platform refuses for good, goes out
// as a line saying so rather than failing the reply again and again. A
// failure that may pass later is returned, for delivery to try again.
func SendFile(log *slog.Logger, workspace, ref string, limit int64, upload, text func(string) (string, error)) (string, error) {
	return SendFileSaying(log, workspace, ref, limit, upload, text, func(name string) string { return FileNote(name, "send failed") })
}

// SendFileSaying is SendFile with the channel's own line for a file that
// did not go (nanobot's DingTalk: "[Attachment send failed: name]").
func SendFileSaying(log *slog.Logger, workspace, ref string, limit int64, upload, text func(string) (string, error), note func(name string) string) (string, error) {
	if IsLink(ref) {
		return text(ref)
	}
	path, why, err := LocalMedia(workspace, ref, limit)
	if why == "" {
		var id string
		if id, err = upload(path); err == nil || !IsPermanent(err) {
			return id, err
		}
		why = "refused by the platform"
	}
	log.Warn("attachment not sent", "file", path, "why", why, "error", err)
	return text(note(filepath.Base(path)))
}

// WorkspacePath is where a reply's file is: ref itself when absolute,
// else ref within the workspace.
func WorkspacePath(workspace, ref string) string {
	if filepath.IsAbs(ref) {
		return ref
	}
	return filepath.Join(workspace, ref)
}

// IsLink tells a reply's media that is a web address (sent as a link or
// fetched by the platform) from a file.
func IsLink(ref string) bool {
	return strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://")
}

// unsafeInName are the characters a saved file's name does not keep: it
// keeps letters and digits of any script (a Chinese file name stays
// readable, as in nanobot), ".", "_" and "-".
var unsafeInName = regexp.MustCompile(`[^\p{L}\p{N}._-]+`)

// SafeFileName is what of a sender's file name may name a file under
// media/: its last element (after either slash), each run of characters
// other than letters, digits, ".", "_" and "-" as one "_", no "." or "_"
// at either end, and its last keep characters, which hold the extension;
// "" when nothing is left.
func SafeFileName(name string, keep int) string {
	name = strings.Trim(unsafeInName.ReplaceAllString(path.Base(strings.ReplaceAll(name, `\`, "/")), "_"), "._")
	if r := []rune(name); len(r) > keep {
		name = string(r[len(r)-keep:])
	}
	return name
}

// SafeID is a platform's id (of a file, a message) as part of a saved
// file's name: only its letters, digits, ".", "_" and "-".
func SafeID(id string) string { return unsafeInName.ReplaceAllString(id, "") }

// MediaName is the name a received file is saved under in media/:
// "<channel>-<id>-<name>", which cannot leave media/ (SafeID, SafeFileName)
// and does not collide (id is the platform's id of the file, or of its
// message and the file's place in it: its last 48 characters are kept).
// A name without an extension gets mimeType's (MediaExt); with no name
// left, it is "<channel>-<id>" and that extension.
func MediaName(channel, id, name, mimeType string) string {
	id = strings.Trim(SafeID(id), ".")
	if r := []rune(id); len(r) > 48 {
		id = string(r[len(r)-48:])
	}
	base := channel + "-" + id
	name = SafeFileName(name, 64)
	if path.Ext(name) == "" {
		name += MediaExt(mimeType)
	}
	switch {
	case name == "":
		return base
	case strings.HasPrefix(name, "."):
		return base + name
	}
	return base + "-" + name
}

// preferredExt is the usual extension of types for which the system's
// list offers several (".jfif" comes before ".jpg" for image/jpeg).
var preferredExt = map[string]string{
	"image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif", "image/webp": ".webp",
	"audio/ogg": ".ogg", "audio/mpeg": ".mp3", "audio/mp4": ".m4a", "audio/amr": ".amr",
	"video/mp4": ".mp4", "video/quicktime": ".mov", "text/plain": ".txt", "application/pdf": ".pdf",
}

// MediaExt is a file extension for a MIME type (parameters ignored: a
// voice note's "audio/ogg; codecs=opus" is ".ogg"); "" when none is known.
func MediaExt(mimeType string) string {
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return ""
	}
	if ext, ok := preferredExt[mt]; ok {
		return ext
	}
	if exts, _ := mime.ExtensionsByType(mt); len(exts) > 0 {
		return exts[0]
	}
	return ""
}

// DispositionName is the file name a download's Content-Disposition
// header gives ("" for none).
func DispositionName(h http.Header) string {
	_, params, err := mime.ParseMediaType(h.Get("Content-Disposition"))
	if err != nil {
		return ""
	}
	return params["filename"]
}

// FetchableURL tells whether a file URL a platform sent may be fetched
// (the fetch may carry a token, or at least reveals the gateway): https on
// a host platformHost accepts (nil: any), or a URL of testBase's scheme and
// host (apiBase, a test server that may speak plain http; "": none).
func FetchableURL(raw, testBase string, platformHost func(host string) bool) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	if b, err := url.Parse(testBase); err == nil && testBase != "" && b.Host == u.Host && b.Scheme == u.Scheme {
		return true
	}
	return u.Scheme == "https" && (platformHost == nil || platformHost(strings.ToLower(u.Hostname())))
}

// RedactURL is a URL for a log or an error: without its query, which
// holds the signature or token that lets anyone fetch the file.
func RedactURL(raw string) string {
	before, _, _ := strings.Cut(raw, "?")
	return before
}

// EmptyMessage is what the model reads of a message with neither text nor a file.
const EmptyMessage = "[empty message]"

// FileNote tells the model about a file it does not get, or that did not
// go out, and why, in nanobot's words: "[attachment: report.pdf - too large]".
func FileNote(name, why string) string { return "[attachment: " + name + " - " + why + "]" }

// FileKind is nanobot's word for a file in the text, by its MIME type:
// image, audio, video or file.
func FileKind(contentType string) string {
	switch k, _, _ := strings.Cut(contentType, "/"); k {
	case "image", "audio", "video":
		return k
	}
	return "file"
}

// FileLine is how the model reads of a file of a message, in nanobot's
// words: the saved path ("[image: /ws/media/a.png]") or what became of it
// ("[image: download failed]").
func FileLine(kind, pathOrWhy string) string { return "[" + kind + ": " + pathOrWhy + "]" }

// WithNotes is content with the notes about files below it, one a line.
func WithNotes(content string, notes []string) string {
	if len(notes) == 0 {
		return content
	}
	return strings.TrimSpace(strings.Join(append([]string{content}, notes...), "\n"))
}

// TakeFiles takes a received message's files in: fetch saves each into
// <workspace>/media and returns its path, or "" and the note the model
// reads instead (too large, download failed); the paths go to msg.Media,
// the notes under msg.Content, so no file goes unmentioned.
func TakeFiles[F any](ctx context.Context, msg *protocol.Inbound, files []F, fetch func(context.Context, F) (path, note string)) {
	var notes []string
	for _, f := range files {
		if path, note := fetch(ctx, f); path != "" {
			msg.Media = append(msg.Media, path)
		} else {
			notes = append(notes, note)
		}
	}
	msg.Content = WithNotes(msg.Content, notes)
}
