package discordpeer

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

var apiPrefix = regexp.MustCompile(`^/api/v[0-9]+`)

// restError is Discord's JSON error body.
func restError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"message": msg, "code": code})
}

// rest serves the REST API under /api/v{n}.
func (p *Peer) rest(w http.ResponseWriter, r *http.Request) {
	path := apiPrefix.ReplaceAllString(r.URL.EscapedPath(), "")
	body, content := p.readBody(r)
	p.Record(Call{Method: r.Method, Path: path, Body: []byte(body)})
	fail, failed := p.failures.Take(r.Method, path)
	if r.Header.Get("Authorization") != "Bot "+Token {
		restError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	if failed {
		fail.Write(w)
		return
	}
	seg := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case r.Method == http.MethodGet && (path == "/gateway" || path == "/gateway/bot"):
		writeJSON(w, http.StatusOK, map[string]any{"url": p.wsURL("/gateway"), "shards": 1,
			"session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
	case r.Method == http.MethodGet && path == "/users/@me":
		writeJSON(w, http.StatusOK, p.botUser())
	case r.Method == http.MethodPost && len(seg) == 4 && seg[0] == "interactions" && seg[3] == "callback":
		p.interactionCallback(w, seg[1], seg[2], body)
	case len(seg) < 2 || seg[0] != "channels":
		restError(w, http.StatusNotFound, 0, "404: Not Found")
	case r.Method == http.MethodGet && len(seg) == 2:
		p.getChannel(w, seg[1])
	case r.Method == http.MethodPost && len(seg) == 3 && seg[2] == "typing":
		if p.channel(seg[1]) == nil {
			restError(w, http.StatusNotFound, 10003, "Unknown Channel")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && len(seg) == 3 && seg[2] == "messages":
		p.postMessage(w, r, seg[1], body, content)
	case r.Method == http.MethodPatch && len(seg) == 4 && seg[2] == "messages":
		p.editMessage(w, seg[1], seg[3], body)
	case (r.Method == http.MethodPut || r.Method == http.MethodDelete) && len(seg) == 7 && seg[4] == "reactions":
		if r.Method == http.MethodPut && !p.waitIfReactionHeld(r, seg[5]) {
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		restError(w, http.StatusNotFound, 0, "404: Not Found")
	}
}

// Reactions are the reactions the bot put on ("+emoji") or took off ("-emoji") a message, in order.
func (p *Peer) Reactions(messageID string) []string {
	var out []string
	for _, c := range p.Calls() {
		seg := strings.Split(strings.Trim(c.Path, "/"), "/")
		if len(seg) != 7 || seg[4] != "reactions" || seg[3] != messageID {
			continue
		}
		emoji, _ := url.PathUnescape(seg[5])
		sign := "+"
		if c.Method == http.MethodDelete {
			sign = "-"
		}
		out = append(out, sign+emoji)
	}
	return out
}

// readBody returns the JSON body (a multipart request's payload_json) and its files.
func (p *Peer) readBody(r *http.Request) (string, []File) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		data, _ := io.ReadAll(io.LimitReader(r.Body, 32<<20))
		return string(data), nil
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var payload string
	var files []File
	for {
		part, err := mr.NextPart()
		if err != nil {
			break
		}
		data, _ := io.ReadAll(io.LimitReader(part, 32<<20))
		if part.FormName() == "payload_json" {
			payload = string(data)
			continue
		}
		files = append(files, File{Name: part.FileName(), ContentType: part.Header.Get("Content-Type"), Data: data})
	}
	return payload, files
}

func (p *Peer) channel(id string) *channel {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.channels[id]
}

func (p *Peer) getChannel(w http.ResponseWriter, id string) {
	c := p.channel(id)
	if c == nil {
		restError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	writeJSON(w, http.StatusOK, c.payload())
}

// outgoing is what the bot sends in a POST or PATCH.
type outgoing struct {
	Content    *string         `json:"content"`
	Components json.RawMessage `json:"components"`
	Reference  *struct {
		MessageID string `json:"message_id"`
	} `json:"message_reference"`
}

func (p *Peer) postMessage(w http.ResponseWriter, r *http.Request, channelID, body string, files []File) {
	if p.channel(channelID) == nil {
		restError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	var out outgoing
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		restError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	text := ""
	if out.Content != nil {
		text = *out.Content
	}
	if utf8.RuneCountInString(text) > 2000 {
		restError(w, http.StatusBadRequest, 50035, "Invalid Form Body: content: Must be 2000 or fewer in length.")
		return
	}
	if text == "" && len(files) == 0 {
		restError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
		return
	}
	if !p.waitIfHeld(r) {
		return // the bot went away while the post was held: it never happened
	}
	m := &Message{ChannelID: channelID, Content: text, Files: files, Components: components(out.Components)}
	if out.Reference != nil {
		m.ReplyTo = out.Reference.MessageID
	}
	p.mu.Lock()
	m.ID = p.idLocked()
	p.messages = append(p.messages, m)
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, p.messagePayload(m))
}

// waitIfHeld holds the post HoldPost named until Release; false if the
// client went away first.
func (p *Peer) waitIfHeld(r *http.Request) bool {
	p.mu.Lock()
	p.posts++
	hold := p.holdAt != 0 && p.posts == p.holdAt
	p.mu.Unlock()
	return p.waitIfHolding(r, hold)
}

// waitIfReactionHeld holds the reaction PUT HoldReaction named until Release.
func (p *Peer) waitIfReactionHeld(r *http.Request, escapedEmoji string) bool {
	emoji, _ := url.PathUnescape(escapedEmoji)
	p.mu.Lock()
	hold := p.holdEmoji != "" && emoji == p.holdEmoji
	if hold {
		p.holdEmoji = ""
	}
	p.mu.Unlock()
	return p.waitIfHolding(r, hold)
}

func (p *Peer) waitIfHolding(r *http.Request, hold bool) bool {
	if !hold {
		return true
	}
	p.mu.Lock()
	held, release := p.held, p.release
	p.mu.Unlock()
	close(held)
	select {
	case <-release:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (p *Peer) editMessage(w http.ResponseWriter, channelID, id, body string) {
	var out outgoing
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		restError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	p.mu.Lock()
	var m *Message
	for _, x := range p.messages {
		if x.ID == id && x.ChannelID == channelID {
			m = x
		}
	}
	if m != nil && out.Content != nil {
		if utf8.RuneCountInString(*out.Content) > 2000 {
			p.mu.Unlock()
			restError(w, http.StatusBadRequest, 50035, "Invalid Form Body: content: Must be 2000 or fewer in length.")
			return
		}
		m.Content = *out.Content
		m.Edits++
	}
	if m != nil && out.Components != nil {
		m.Components = components(out.Components)
		m.Edits++
	}
	p.mu.Unlock()
	if m == nil {
		restError(w, http.StatusNotFound, 10008, "Unknown Message")
		return
	}
	writeJSON(w, http.StatusOK, p.messagePayload(m))
}

func (p *Peer) messagePayload(m *Message) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var atts []map[string]any
	for i, f := range m.Files {
		atts = append(atts, map[string]any{"id": m.ID + string(rune('0'+i)), "filename": f.Name, "size": len(f.Data),
			"url": p.srv.URL + "/attachments/" + m.ChannelID + "/" + m.ID + "/" + f.Name})
	}
	return map[string]any{"id": m.ID, "channel_id": m.ChannelID, "type": 0, "content": m.Content,
		"author": p.botUser(), "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		"edited_timestamp": nil, "tts": false, "mention_everyone": false, "mentions": []any{},
		"mention_roles": []any{}, "attachments": atts, "embeds": []any{}, "pinned": false}
}
