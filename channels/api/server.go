package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// maxBody bounds a request body: base64 images make them large (nanobot's limit).
const maxBody = 20 << 20

// ServeHTTP routes the API. Every answer but /health needs the bearer key
// when api.apiKey is set; every error is OpenAI's error shape.
func (c *Channel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if path == "/health" {
		if !allowMethod(w, r, http.MethodGet) {
			return
		}
		writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`))
		return
	}
	if e := c.authorize(r); e != nil {
		writeError(w, *e)
		return
	}
	switch path {
	case "/v1/chat/completions":
		if allowMethod(w, r, http.MethodPost) {
			c.chatCompletions(w, r)
		}
	case "/v1/models":
		if allowMethod(w, r, http.MethodGet) {
			c.models(w)
		}
	default:
		writeError(w, badRequest(http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", r.Method, path)))
	}
}

func allowMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, badRequest(http.StatusMethodNotAllowed, fmt.Sprintf("Method %s is not allowed on %s (use %s)", r.Method, r.URL.Path, method)))
	return false
}

// authorize checks "Authorization: Bearer <api.apiKey>".
func (c *Channel) authorize(r *http.Request) *apiError {
	if c.apiKey == "" {
		return nil
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return errp(badRequest(http.StatusUnauthorized, "Missing Authorization header: send Authorization: Bearer <api key>"))
	}
	scheme, key, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(key)), []byte(c.apiKey)) != 1 {
		return errp(badRequest(http.StatusUnauthorized, "Invalid API key"))
	}
	return nil
}

func (c *Channel) models(w http.ResponseWriter) {
	body, _ := json.Marshal(modelList{Object: "list", Data: []modelEntry{{ID: c.model, Object: "model", OwnedBy: "nanobot"}}})
	writeJSON(w, http.StatusOK, body)
}

// chatCompletions publishes the user message and answers with the turn's reply.
func (c *Channel) chatCompletions(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/") {
		writeError(w, badRequest(http.StatusUnsupportedMediaType,
			"multipart/form-data uploads are not supported: send JSON, with images as base64 data URLs"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, badRequest(http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body is larger than %d MB", maxBody>>20)))
			return
		}
		writeError(w, badRequest(http.StatusBadRequest, "Could not read the request body: "+err.Error()))
		return
	}
	req, e := parseChatRequest(body, c.model)
	if e != nil {
		writeError(w, *e)
		return
	}
	chatID := req.SessionID
	if chatID == "" {
		chatID = defaultChat
	}
	msgID := "api-" + newID(8)
	media, err := c.saveImages(msgID, req.Images)
	if err != nil {
		c.log.Error("saving request images failed", "error", err)
		writeError(w, serverError(http.StatusInternalServerError, "Could not store the images: "+err.Error()))
		return
	}
	c.log.Info("API request", "session", protocol.SessionKey(Name, chatID), "stream", req.Stream,
		"text", chat.Preview(req.Text, 80), "media", len(media))

	deadline := time.NewTimer(time.Duration(c.timeout * float64(time.Second)))
	defer deadline.Stop()
	wt := c.waiters.add(msgID, chatID, req.Stream)
	defer c.waiters.remove(wt)
	if done := c.waiters.outcome(wt); done != nil {
		writeError(w, *done.err) // the server is stopping: nothing is published
		return
	}
	msg := protocol.Inbound{
		ID: msgID, Content: req.Text, Media: media, SentAt: time.Now(),
		Route: protocol.Route{Channel: Name, ChatID: chatID, SenderID: senderID, Queue: c.queue},
		Scope: protocol.OwnChat(), // nanobot: session_id picks api:<id>, unifiedSession or not
	}
	if err := c.publish(context.WithValue(r.Context(), publishingKey{}, wt), msg, nil); err != nil {
		if r.Context().Err() != nil {
			return // the client left while we published
		}
		c.log.Error("publishing an API message failed", "chat", chatID, "error", err)
		writeError(w, serverError(http.StatusServiceUnavailable, "The agent could not take the message: "+err.Error()))
		return
	}
	if done := c.waiters.outcome(wt); done != nil && done.err == nil && isStop(req.Text) {
		// The stopped turn will not reply: the request it was answering gets the stop's reply.
		c.waiters.answerOldestBut(chatID, wt, done.reply)
	}

	var sse *sseWriter
	if req.Stream {
		sse = newSSEWriter(w, "chatcmpl-"+newID(6), time.Now().Unix(), c.model)
		if sse.Role() != nil {
			return
		}
	}
	for {
		pieces, done := c.waiters.take(wt)
		for _, p := range pieces { // only a streaming request is given pieces
			if sse == nil || sse.Content(p) != nil {
				return // the client went away; the turn's reply stays in the journal
			}
		}
		if done != nil {
			c.respond(w, sse, wt, *done)
			return
		}
		select {
		case <-wt.wake:
		case <-deadline.C:
			c.log.Warn("API request timed out; its turn goes on", "chat", chatID, "timeout_s", c.timeout)
			c.waiters.fail(wt, serverError(http.StatusGatewayTimeout, "Request timed out after "+pySeconds(c.timeout)+"s"))
		case <-r.Context().Done():
			c.log.Info("API client went away before the reply; it stays in the journal", "chat", chatID)
			return
		}
	}
}

// respond writes how a request ended, as JSON or as the end of its stream.
func (c *Channel) respond(w http.ResponseWriter, sse *sseWriter, wt *waiter, o outcome) {
	if o.err != nil {
		if sse != nil {
			_ = sse.Fail(*o.err)
			return
		}
		writeError(w, *o.err)
		return
	}
	if sse != nil {
		if sse.Content(c.waiters.final(wt, o.reply)) == nil {
			_ = sse.Finish("stop")
		}
		return
	}
	body, _ := json.Marshal(completion{
		ID: "chatcmpl-" + newID(6), Object: "chat.completion", Created: time.Now().Unix(), Model: c.model,
		Choices: []completionChoice{{Message: completionMessage{Role: "assistant", Content: o.reply}, FinishReason: "stop"}},
	})
	writeJSON(w, http.StatusOK, body)
}

// completion is a chat.completion body. Token usage is not known here (a
// turn may make several model calls): it is reported as 0, as nanobot does.
type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

type completionChoice struct {
	Index        int               `json:"index"`
	Message      completionMessage `json:"message"`
	FinishReason string            `json:"finish_reason"`
}

type completionMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type modelList struct {
	Object string       `json:"object"`
	Data   []modelEntry `json:"data"`
}

type modelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// saveImages writes inline images into <workspace>/media/api, where the
// turn reads a message's media from.
func (c *Channel) saveImages(msgID string, images []image) ([]string, error) {
	if len(images) == 0 {
		return nil, nil
	}
	dir := filepath.Join(c.workspace, "media", Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	var paths []string
	for i, img := range images {
		p := filepath.Join(dir, fmt.Sprintf("%s-%d%s", msgID, i+1, imageExt(img.MIME)))
		if err := os.WriteFile(p, img.Data, 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

func imageExt(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/jpeg", "image/jpg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ".img"
}

func isStop(text string) bool {
	name, _, ok := protocol.ParseCommand(text)
	return ok && name == "/stop"
}
