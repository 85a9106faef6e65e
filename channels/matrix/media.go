package matrix

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto/attachment"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/protocol"
)

// errTooLarge is a file over maxMediaBytes (or the homeserver's limit).
var errTooLarge = channels.ErrTooLarge

// downloadInto saves a message's file into <workspace>/media and gives it
// to the agent (images reach the model as images); a file that cannot be
// fetched is named in the text instead, as nanobot does.
func (c *Channel) downloadInto(ctx context.Context, in *protocol.Inbound, eventID string, m message) {
	path, err := c.download(ctx, eventID, m)
	if err == nil {
		in.Media = []string{path}
		return
	}
	c.Log.Warn("matrix file not downloaded", "event_id", eventID, "url", m.URL, "error", err)
	why := "download failed"
	if errors.Is(err, errTooLarge) {
		why = "too large"
	}
	note := channels.FileLine(m.kind(), m.fileName()+" - "+why)
	if m.caption() == "" {
		in.Content = note
	} else {
		in.Content += "\n" + note
	}
}

func (c *Channel) download(ctx context.Context, eventID string, m message) (string, error) {
	if c.workspace == "" {
		return "", errors.New("no workspace to save files in")
	}
	limit := c.mediaLimit()
	if m.Info != nil && int64(m.Info.Size) > limit {
		return "", fmt.Errorf("declared size %d over %d bytes: %w", m.Info.Size, limit, errTooLarge)
	}
	mxc := m.URL
	if m.File != nil { // an encrypted room's file: the event holds its key
		mxc = m.File.URL
	}
	uri, err := id.ParseContentURI(string(mxc))
	if err != nil {
		return "", fmt.Errorf("url %q: %w", mxc, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	defer cancel()
	resp, err := c.api().Download(cctx, uri)
	if err != nil {
		return "", fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if resp.ContentLength > limit {
		return "", fmt.Errorf("%d bytes over %d: %w", resp.ContentLength, limit, errTooLarge)
	}
	var body io.Reader = resp.Body
	if m.File != nil {
		if body, err = decryptFile(m.File, resp.Body, limit); err != nil {
			return "", err
		}
	}
	return channels.SaveMedia(c.workspace, mediaName(eventID, m), body, limit)
}

// decryptFile is an encrypted file's plain bytes, checked against the
// hash its event gives (at most limit bytes: AES-CTR keeps the size).
func decryptFile(file *event.EncryptedFileInfo, body io.Reader, limit int64) (io.Reader, error) {
	data, err := channels.ReadLimited(body, limit)
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	plain, err := file.DecryptInPlaceReturn(data)
	if err != nil {
		return nil, fmt.Errorf("decrypt the file: %w", err)
	}
	return bytes.NewReader(plain), nil
}

func (c *Channel) mediaLimit() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.uploadLimit
}

// mediaName is the saved file's name (channels.MediaName): the event id,
// then the sender's file name, or the kind and an extension by its type.
func mediaName(eventID string, m message) string {
	var mimeType string
	if m.Info != nil {
		mimeType = m.Info.MimeType
	}
	return channels.MediaName("matrix", strings.TrimPrefix(eventID, "$"), cmp.Or(channels.SafeFileName(m.fileName(), 64), m.kind()), mimeType)
}

// fileContent uploads a workspace file to the content repository and is
// the event that shows it: m.image for images, m.audio, m.video, else
// m.file. For an encrypted room the file is encrypted before it leaves
// (its key goes in the event, which is encrypted in turn).
func (c *Channel) fileContent(ctx context.Context, room, path string) (*event.MessageEventContent, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, &fileError{err}
	}
	if limit := c.mediaLimit(); info.Size() > limit {
		return nil, &fileError{fmt.Errorf("%d bytes over %d: %w", info.Size(), limit, errTooLarge)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &fileError{err}
	}
	name := filepath.Base(path)
	mimeType := channels.FileType(name, data)
	sealed, err := c.sealsFor(ctx, room)
	if err != nil {
		return nil, err
	}
	upload := mautrix.ReqUploadMedia{ContentBytes: data, ContentType: mimeType, FileName: name}
	var file *attachment.EncryptedFile
	if sealed {
		file = attachment.NewEncryptedFile()
		file.EncryptInPlace(data)
		upload.ContentType, upload.FileName = "application/octet-stream", ""
	}
	cctx, cancel := context.WithTimeout(ctx, 2*callTimeout)
	defer cancel()
	up, err := c.api().UploadMedia(cctx, upload)
	if err != nil {
		return nil, sendError("upload", err)
	}
	msgType := event.MsgFile
	switch strings.SplitN(mimeType, "/", 2)[0] {
	case "image":
		msgType = event.MsgImage
	case "audio":
		msgType = event.MsgAudio
	case "video":
		msgType = event.MsgVideo
	}
	content := &event.MessageEventContent{
		MsgType: msgType, Body: name, FileName: name, URL: up.ContentURI.CUString(),
		Info:     &event.FileInfo{MimeType: mimeType, Size: int(info.Size())},
		Mentions: &event.Mentions{},
	}
	if file != nil {
		content.URL, content.File = "", &event.EncryptedFileInfo{EncryptedFile: *file, URL: up.ContentURI.CUString()}
	}
	return content, nil
}

// fileError is a local file that cannot be sent: retrying will not help.
type fileError struct{ err error }

func (e *fileError) Error() string { return e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }
