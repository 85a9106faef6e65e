package wecom

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// Limits of a reply (WeCom's documentation): a stream's content holds
// 20480 bytes, a proactive Markdown message 4096. maxRunes keeps a part
// under 20480 bytes whatever its script.
const (
	maxRunes         = 5000
	maxProactiveSize = 4096
	chunkSize        = 512 << 10 // raw bytes per aibot_upload_media_chunk
)

// replyWindow is how long a callback's req_id takes replies: WeCom closes
// a stream 6 minutes after the message; later replies go proactively.
const replyWindow = 5*time.Minute + 30*time.Second

// WeCom's errcodes the channel tells apart.
const (
	codeBusy          = -1     // system busy: try again
	codeFreqLimit     = 45009  // api freq out of limit
	codeInvalidReqID  = 846605 // the callback's req_id is no longer valid
	codeStreamExpired = 846608 // stream message update expired
)

// replyTargets remember the req_id of each message's callback, for the
// window in which WeCom takes replies on it.
type replyTargets struct {
	mu   sync.Mutex
	byID map[string]replyTarget
}

type replyTarget struct {
	reqID string
	at    time.Time
}

func newReplyTargets() *replyTargets { return &replyTargets{byID: map[string]replyTarget{}} }

func (r *replyTargets) put(msgID, reqID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for k, v := range r.byID {
		if now.Sub(v.at) > replyWindow {
			delete(r.byID, k)
		}
	}
	r.byID[msgID] = replyTarget{reqID: reqID, at: now}
}

// get is the req_id to answer msgID on, "" once its window has passed.
func (r *replyTargets) get(msgID string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.byID[msgID]
	if !ok || time.Since(t.at) > replyWindow {
		return ""
	}
	return t.reqID
}

// MaxLength implements channels.PartSender.
func (c *Channel) MaxLength() int { return maxRunes }

// SendPart implements channels.PartSender: a part answering a message goes
// as a finished stream message on its callback's req_id (nanobot's
// reply_stream); anything else — a message tool send, a reply after the
// window, a cron push — as proactive Markdown to the chat.
func (c *Channel) SendPart(ctx context.Context, r channels.Reply, p channels.Part) (string, error) {
	cn := c.current()
	if cn == nil {
		return "", errors.New("wecom is not connected")
	}
	if r.Route.ChatID == "" {
		return "", &channels.SendError{Err: errors.New("wecom reply without a chat"), Permanent: true}
	}
	reqID := c.replies.get(r.Route.ReplyTo)
	if p.Media != "" {
		return c.sendMedia(ctx, cn, reqID, r.Route.ChatID, p.Media)
	}
	text := format.Markdown(p.Text)
	if text == "" {
		return "", nil
	}
	id := newReqID("stream")
	if reqID != "" && r.Answer() && p.Index == len(r.Media) {
		if drawnReq, drawnID := c.take(r.Route.ReplyTo, r.Turn); drawnID != "" {
			reqID, id = drawnReq, drawnID // the answer finishes the stream drawn for it
		}
	}
	return c.reply(ctx, cn, reqID, id, r.Route.ChatID, text)
}

// reply sends text as the finished stream id on the callback's req_id,
// or proactively when there is none or it no longer takes replies.
func (c *Channel) reply(ctx context.Context, cn *conn, reqID, id, chatID, text string) (string, error) {
	if reqID != "" {
		_, err := cn.request(ctx, cmdRespond, reqID, streamBody{MsgType: "stream", Stream: stream{ID: id, Finish: true, Content: text}})
		if !expired(err) {
			return id, sendError(err)
		}
		c.Log.Info("wecom callback no longer takes replies; sending proactively", "chat", chatID, "error", err)
	}
	return c.proactive(ctx, cn, chatID, text)
}

// proactive sends Markdown with aibot_send_msg, in pieces of WeCom's 4096 bytes.
func (c *Channel) proactive(ctx context.Context, cn *conn, chatID, text string) (string, error) {
	var id string
	for _, piece := range splitBytes(text, maxProactiveSize) {
		id = newReqID(cmdSend)
		if _, err := cn.request(ctx, cmdSend, id, sendBody{ChatID: chatID, MsgType: "markdown", Markdown: &content{Content: piece}}); err != nil {
			return "", sendError(err)
		}
	}
	return id, nil
}

// splitBytes cuts text into pieces of at most limit UTF-8 bytes, at the
// shared splitter's boundaries.
func splitBytes(text string, limit int) []string {
	if len(text) <= limit {
		return []string{text}
	}
	runes := limit / utf8.UTFMax
	return markdown.Split(text, runes)
}

// expired: the callback's req_id or stream can no longer be answered.
func expired(err error) bool {
	var ack *ackError
	return errors.As(err, &ack) && (ack.code == codeInvalidReqID || ack.code == codeStreamExpired)
}

// sendError tells delivery how to treat a failed send: WeCom's frequency
// limit waits, "system busy", a lost connection or a missing
// acknowledgement are retried, any other errcode is a refusal the same
// frame will meet again.
func sendError(err error) error {
	if err == nil {
		return nil
	}
	var ack *ackError
	if !errors.As(err, &ack) {
		return err
	}
	switch ack.code {
	case codeFreqLimit:
		return &channels.SendError{Err: err, RetryAfter: 2 * time.Second}
	case codeBusy:
		return err
	}
	return &channels.SendError{Err: err, Permanent: true}
}

// sendMedia uploads a workspace file over the socket (init, 512 KB chunks,
// finish: a media_id) and sends it; a URL goes as a Markdown link. A file
// that cannot be sent becomes nanobot's "[file upload failed: name]".
func (c *Channel) sendMedia(ctx context.Context, cn *conn, reqID, chatID, ref string) (string, error) {
	if channels.IsLink(ref) {
		return c.reply(ctx, cn, reqID, newReqID("stream"), chatID, ref)
	}
	path := channels.WorkspacePath(c.workspace, ref)
	name := filepath.Base(path)
	mediaID, kind, err := c.upload(ctx, cn, path)
	if err != nil {
		var se *channels.SendError
		if errors.As(err, &se) && !se.Permanent {
			return "", err
		}
		c.Log.Warn("wecom file not sent", "file", path, "error", err)
		return c.reply(ctx, cn, reqID, newReqID("stream"), chatID, "[file upload failed: "+name+"]")
	}
	if reqID != "" {
		_, err := cn.request(ctx, cmdRespond, reqID, mediaBody("", kind, mediaID))
		if !expired(err) {
			return mediaID, sendError(err)
		}
	}
	_, err = cn.request(ctx, cmdSend, newReqID(cmdSend), mediaBody(chatID, kind, mediaID))
	return mediaID, sendError(err)
}

// upload sends a file in WeCom's three steps and returns its media_id and
// media type; a missing or oversized file is a permanent failure.
func (c *Channel) upload(ctx context.Context, cn *conn, path string) (mediaID, kind string, err error) {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return "", "", &channels.SendError{Err: fmt.Errorf("file %s: %w", path, err), Permanent: true}
	case !st.Mode().IsRegular():
		return "", "", &channels.SendError{Err: fmt.Errorf("%s is not a file", path), Permanent: true}
	case st.Size() > maxMedia:
		return "", "", &channels.SendError{Err: fmt.Errorf("%s: over the %d-byte limit", path, maxMedia), Permanent: true}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", &channels.SendError{Err: fmt.Errorf("read %s: %w", path, err), Permanent: true}
	}
	sum := md5.Sum(data) // WeCom's integrity check, not security
	kind = mediaType(path)
	chunks := (len(data) + chunkSize - 1) / chunkSize
	var ans uploadAnswer
	ack, err := cn.request(ctx, cmdUploadInit, newReqID("upload_init"), uploadInit{
		Type: kind, Filename: filepath.Base(path), TotalSize: len(data), TotalChunks: chunks, MD5: hex.EncodeToString(sum[:])})
	if err != nil {
		return "", "", sendError(err)
	}
	if err := decodeAnswer(ack, &ans); err != nil || ans.UploadID == "" {
		return "", "", &channels.SendError{Err: fmt.Errorf("wecom upload init: no upload_id (%v)", err), Permanent: true}
	}
	for i := range chunks {
		part := data[i*chunkSize : min((i+1)*chunkSize, len(data))]
		if _, err := cn.request(ctx, cmdUploadChunk, newReqID("upload_chunk"), chunkBody(ans.UploadID, i, part)); err != nil {
			return "", "", sendError(err)
		}
	}
	ack, err = cn.request(ctx, cmdUploadFinish, newReqID("upload_finish"), uploadFinish{UploadID: ans.UploadID})
	if err != nil {
		return "", "", sendError(err)
	}
	var done uploadAnswer
	if err := decodeAnswer(ack, &done); err != nil || done.MediaID == "" {
		return "", "", &channels.SendError{Err: fmt.Errorf("wecom upload finish: no media_id (%v)", err), Permanent: true}
	}
	return done.MediaID, kind, nil
}

func chunkBody(uploadID string, i int, part []byte) uploadChunk {
	return uploadChunk{UploadID: uploadID, ChunkIndex: i, Base64Data: base64.StdEncoding.EncodeToString(part)}
}

// decodeAnswer reads an acknowledgement's body.
func decodeAnswer(ack frame, v any) error {
	if len(ack.Body) == 0 {
		return errors.New("empty body")
	}
	return json.Unmarshal(ack.Body, v)
}

// Extensions by WeCom media type (nanobot's _guess_wecom_media_type).
var (
	imageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".webp": true, ".bmp": true}
	videoExts = map[string]bool{".mp4": true, ".avi": true, ".mov": true}
	voiceExts = map[string]bool{".amr": true, ".mp3": true, ".wav": true, ".ogg": true}
)

// mediaType is the WeCom media type of a file, by its extension.
func mediaType(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case imageExts[ext]:
		return "image"
	case videoExts[ext]:
		return "video"
	case voiceExts[ext]:
		return "voice"
	}
	return "file"
}
