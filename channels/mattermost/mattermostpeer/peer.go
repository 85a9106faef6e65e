// Package mattermostpeer is a fake Mattermost server for tests, at the
// wire, after Mattermost's API v4 documentation: the REST endpoints a bot
// uses (users/me, posts and their patch, files, reactions, typing) with
// bearer-token auth and Mattermost's error bodies, and the /api/v4/websocket
// event stream — the authentication_challenge, hello with its
// connection_id, events numbered by seq, and a reconnect naming
// connection_id and sequence_number replaying what the client missed. It
// records what the bot did and can drop the socket.
package mattermostpeer

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nanobot-durable/nanobot/channels/peerkit"
	"time"
)

// The bot and team the peer knows.
const (
	Token   = "mm-peer-bot-token"
	BotID   = "bot0000000000000000000000a"
	BotName = "nanobot-peer"
	TeamID  = "team000000000000000000000a"
)

// Channel types (the "type" of a Mattermost channel).
const (
	TypeOpen    = "O"
	TypePrivate = "P"
	TypeDirect  = "D"
	TypeGroup   = "G"
)

// User is a Mattermost user who talks to the bot.
type User struct{ ID, Username string }

// Bot is the bot's own user.
var Bot = User{ID: BotID, Username: BotName}

// Post is a post in a channel, as it shows now.
type Post struct {
	ID, ChannelID, UserID, RootID, Message string
	FileIDs                                []string
	Props                                  map[string]any
	// Drawn is every message the post showed: as created, then each patch.
	Drawn []string
}

type file struct {
	name string
	data []byte
}

// Peer is a running fake Mattermost.
type Peer struct {
	t   testing.TB
	srv *httptest.Server

	mu        sync.Mutex
	channels  map[string]string // channel id → type
	users     map[string]User
	posts     []*Post
	byID      map[string]*Post
	files     map[string]file
	reactions map[string][]string // post id → "+emoji" / "-emoji" by the bot, in order
	rec       peerkit.Recorder
	nextID    int
	ws        wsState
	refuse    atomic.Bool // the socket refuses the token
}

// New starts the peer on 127.0.0.1; it stops when the test ends.
func New(t testing.TB) *Peer {
	t.Helper()
	p := &Peer{t: t, channels: map[string]string{}, users: map[string]User{BotID: Bot}, byID: map[string]*Post{}, files: map[string]file{},
		reactions: map[string][]string{}}
	p.ws.sessions = map[string]*session{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v4/websocket", p.websocket)
	mux.HandleFunc("GET /api/v4/users/me", p.authed(p.me))
	mux.HandleFunc("POST /api/v4/posts", p.authed(p.createPost))
	mux.HandleFunc("PUT /api/v4/posts/{id}/patch", p.authed(p.patchPost))
	mux.HandleFunc("GET /api/v4/posts/{id}", p.authed(p.getPost))
	mux.HandleFunc("GET /api/v4/posts/{id}/thread", p.authed(p.thread))
	mux.HandleFunc("GET /api/v4/channels/{id}", p.authed(p.channel))
	mux.HandleFunc("GET /api/v4/users/{id}", p.authed(p.user))
	mux.HandleFunc("POST /api/v4/files", p.authed(p.upload))
	mux.HandleFunc("GET /api/v4/files/{id}/info", p.authed(p.fileInfo))
	mux.HandleFunc("GET /api/v4/files/{id}", p.authed(p.download))
	mux.HandleFunc("POST /api/v4/reactions", p.authed(p.react))
	mux.HandleFunc("DELETE /api/v4/users/{uid}/posts/{pid}/reactions/{emoji}", p.authed(p.unreact))
	mux.HandleFunc("POST /api/v4/users/{uid}/typing", p.authed(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		peerkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "OK"})
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("mattermostpeer: the bot called %s %s, which the peer does not serve", r.Method, r.URL)
		apiError(w, http.StatusNotFound, "api.context.404.app_error", "Sorry, we could not find the page.")
	})
	p.srv = httptest.NewServer(p.rec.Wrap(mux))
	t.Cleanup(func() {
		p.Drop()
		p.srv.Close()
	})
	return p
}

// URL is the server's base (channels.mattermost.serverUrl).
func (p *Peer) URL() string { return p.srv.URL }

// Channel registers a channel of a type (TypeDirect for a DM).
func (p *Peer) Channel(id, kind string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.channels[id] = kind
}

// AddFile stores a file a user attaches and returns its id.
func (p *Peer) AddFile(name string, data []byte) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := p.idLocked("file")
	p.files[id] = file{name: name, data: data}
	return id
}

// File is an uploaded or attached file's name and bytes.
func (p *Peer) File(id string) (name string, data []byte, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.files[id]
	return f.name, f.data, ok
}

// Posts are the bot's posts in a channel, in order.
func (p *Peer) Posts(channelID string) []Post {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Post
	for _, m := range p.posts {
		if m.ChannelID == channelID && m.UserID == BotID {
			out = append(out, *m)
		}
	}
	return out
}

// Reactions are the bot's reactions on a post as "+emoji" and "-emoji", in order.
func (p *Peer) Reactions(postID string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reactions[postID]...)
}

// CallsTo counts the bot's requests of a method to a path starting with prefix.
func (p *Peer) CallsTo(method, prefix string) int { return p.rec.CallsTo(method, prefix) }

func (p *Peer) idLocked(kind string) string {
	p.nextID++
	id := fmt.Sprintf("%s%d", kind, p.nextID)
	return id + strings.Repeat("x", 26-len(id)) // Mattermost ids are 26 characters
}

// authed checks the bearer token as Mattermost does and hands on the body.
func (p *Peer) authed(h func(http.ResponseWriter, *http.Request, []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer "+Token {
			apiError(w, http.StatusUnauthorized, "api.context.session_expired.app_error", "Invalid or expired session, please login again.")
			return
		}
		h(w, r, body)
	}
}

func (p *Peer) me(w http.ResponseWriter, _ *http.Request, _ []byte) {
	peerkit.WriteJSON(w, http.StatusOK, map[string]any{"id": BotID, "username": BotName, "is_bot": true, "roles": "system_user"})
}

// Say posts a user's message and sends its "posted" event; it returns the post id.
func (p *Peer) Say(from User, channelID, rootID, message string, fileIDs ...string) string {
	p.mu.Lock()
	p.users[from.ID] = from
	post := &Post{ID: p.idLocked("post"), ChannelID: channelID, UserID: from.ID, RootID: rootID, Message: message, FileIDs: fileIDs}
	p.addLocked(post)
	p.mu.Unlock()
	p.broadcastPosted(post, from.Username)
	return post.ID
}

// Redeliver sends a post's "posted" event again, as a server replaying a
// connection's events may.
func (p *Peer) Redeliver(postID string) {
	p.mu.Lock()
	post := p.byID[postID]
	p.mu.Unlock()
	p.broadcastPosted(post, "someone")
}

func (p *Peer) addLocked(post *Post) {
	if post.FileIDs == nil {
		post.FileIDs = []string{}
	}
	post.Drawn = []string{post.Message}
	p.posts = append(p.posts, post)
	p.byID[post.ID] = post
}

// mention is how Mattermost finds the bot's @-mention: a word of its own.
var mention = regexp.MustCompile(`(^|[^\w@.-])@` + regexp.QuoteMeta(BotName) + `(\.?$|\.?[^\w.-])`)

// broadcastPosted sends the "posted" event: its data carries the post as a
// JSON string, the channel's type and the mentioned user ids (also a JSON string).
func (p *Peer) broadcastPosted(post *Post, sender string) {
	p.mu.Lock()
	kind := p.channels[post.ChannelID]
	raw, _ := json.Marshal(p.postJSONLocked(post))
	p.mu.Unlock()
	data := map[string]any{"channel_type": kind, "post": string(raw), "sender_name": "@" + sender, "set_online": true}
	if kind != TypeDirect && kind != TypeGroup {
		data["team_id"] = TeamID
	}
	if mention.MatchString(post.Message) {
		data["mentions"] = `["` + BotID + `"]`
	}
	p.broadcast("posted", data, post.ChannelID)
}

// React sends a reaction_added event of a user's reaction.
func (p *Peer) React(from User, postID, emoji string) {
	p.mu.Lock()
	channelID := p.byID[postID].ChannelID
	p.mu.Unlock()
	raw, _ := json.Marshal(map[string]any{"user_id": from.ID, "post_id": postID, "emoji_name": emoji, "create_at": time.Now().UnixMilli()})
	p.broadcast("reaction_added", map[string]any{"reaction": string(raw)}, channelID)
}

func (p *Peer) postJSONLocked(post *Post) map[string]any {
	now := time.Now().UnixMilli()
	m := map[string]any{"id": post.ID, "create_at": now, "update_at": now, "edit_at": 0, "delete_at": 0,
		"user_id": post.UserID, "channel_id": post.ChannelID, "root_id": post.RootID, "original_id": "",
		"message": post.Message, "type": "", "props": post.Props, "hashtags": "", "file_ids": post.FileIDs, "pending_post_id": ""}
	if post.Props == nil {
		m["props"] = map[string]any{}
	}
	return m
}

// createPost is POST /api/v4/posts: the bot's post, sent back to it as a
// "posted" event as Mattermost does.
func (p *Peer) createPost(w http.ResponseWriter, _ *http.Request, body []byte) {
	var in struct {
		ChannelID string         `json:"channel_id"`
		Message   string         `json:"message"`
		RootID    string         `json:"root_id"`
		FileIDs   []string       `json:"file_ids"`
		Props     map[string]any `json:"props"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.ChannelID == "" {
		apiError(w, http.StatusBadRequest, "api.context.invalid_body_param.app_error", "Invalid or missing post in request body.")
		return
	}
	p.mu.Lock()
	if _, known := p.channels[in.ChannelID]; !known {
		p.mu.Unlock()
		apiError(w, http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
		return
	}
	post := &Post{ID: p.idLocked("post"), ChannelID: in.ChannelID, UserID: BotID, RootID: in.RootID, Message: in.Message, FileIDs: in.FileIDs, Props: in.Props}
	p.addLocked(post)
	out := p.postJSONLocked(post)
	p.mu.Unlock()
	peerkit.WriteJSON(w, http.StatusCreated, out)
	p.broadcastPosted(post, BotName)
}

// patchPost is PUT /api/v4/posts/{id}/patch: only the bot's own posts.
func (p *Peer) patchPost(w http.ResponseWriter, r *http.Request, body []byte) {
	var in struct {
		Message *string `json:"message"`
	}
	_ = json.Unmarshal(body, &in)
	p.mu.Lock()
	defer p.mu.Unlock()
	post := p.byID[r.PathValue("id")]
	switch {
	case post == nil:
		apiError(w, http.StatusNotFound, "app.post.get.app_error", "Unable to get the post.")
	case post.UserID != BotID:
		apiError(w, http.StatusForbidden, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
	default:
		if in.Message != nil {
			post.Message = *in.Message
			post.Drawn = append(post.Drawn, post.Message)
		}
		peerkit.WriteJSON(w, http.StatusOK, p.postJSONLocked(post))
	}
}

func (p *Peer) getPost(w http.ResponseWriter, r *http.Request, _ []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	post := p.byID[r.PathValue("id")]
	if post == nil {
		apiError(w, http.StatusNotFound, "app.post.get.app_error", "Unable to get the post.")
		return
	}
	peerkit.WriteJSON(w, http.StatusOK, p.postJSONLocked(post))
}

// thread is GET /api/v4/posts/{id}/thread: the root and its replies, newest first in order.
func (p *Peer) thread(w http.ResponseWriter, r *http.Request, _ []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	root := r.PathValue("id")
	if p.byID[root] == nil {
		apiError(w, http.StatusNotFound, "app.post.get.app_error", "Unable to get the post.")
		return
	}
	order, posts := []string{}, map[string]any{}
	for i := len(p.posts) - 1; i >= 0; i-- {
		if q := p.posts[i]; q.ID == root || q.RootID == root {
			order = append(order, q.ID)
			posts[q.ID] = p.postJSONLocked(q)
		}
	}
	peerkit.WriteJSON(w, http.StatusOK, map[string]any{"order": order, "posts": posts, "next_post_id": "", "prev_post_id": ""})
}

func (p *Peer) channel(w http.ResponseWriter, r *http.Request, _ []byte) {
	p.mu.Lock()
	kind, ok := p.channels[r.PathValue("id")]
	p.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, "app.channel.get.existing.app_error", "Unable to find the existing channel.")
		return
	}
	team := TeamID
	if kind == TypeDirect || kind == TypeGroup {
		team = ""
	}
	peerkit.WriteJSON(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "type": kind, "team_id": team, "name": "peer-channel"})
}

// user is GET /api/v4/users/{id}: a user's username and email (username@example.com).
func (p *Peer) user(w http.ResponseWriter, r *http.Request, _ []byte) {
	p.mu.Lock()
	u, ok := p.users[r.PathValue("id")]
	p.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, "app.user.missing_account.const", "Unable to find the user.")
		return
	}
	peerkit.WriteJSON(w, http.StatusOK, map[string]any{"id": u.ID, "username": u.Username, "email": u.Username + "@example.com"})
}

// upload is POST /api/v4/files, the documented form with channel_id and
// filename in the query and the file's bytes as the body.
func (p *Peer) upload(w http.ResponseWriter, r *http.Request, body []byte) {
	q := r.URL.Query()
	if q.Get("channel_id") == "" || q.Get("filename") == "" {
		apiError(w, http.StatusBadRequest, "api.file.upload_file.incorrect_number_of_files.app_error", "Unable to upload files.")
		return
	}
	p.mu.Lock()
	id := p.idLocked("file")
	p.files[id] = file{name: q.Get("filename"), data: body}
	p.mu.Unlock()
	info := map[string]any{"id": id, "name": q.Get("filename"), "size": len(body)}
	peerkit.WriteJSON(w, http.StatusCreated, map[string]any{"file_infos": []any{info}, "client_ids": []string{}})
}

func (p *Peer) fileInfo(w http.ResponseWriter, r *http.Request, _ []byte) {
	name, data, ok := p.File(r.PathValue("id"))
	if !ok {
		apiError(w, http.StatusNotFound, "app.file_info.get.app_error", "Unable to get the file info.")
		return
	}
	peerkit.WriteJSON(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "name": name, "size": len(data)})
}

func (p *Peer) download(w http.ResponseWriter, r *http.Request, _ []byte) {
	_, data, ok := p.File(r.PathValue("id"))
	if !ok {
		apiError(w, http.StatusNotFound, "app.file_info.get.app_error", "Unable to get the file info.")
		return
	}
	_, _ = w.Write(data)
}

func (p *Peer) react(w http.ResponseWriter, _ *http.Request, body []byte) {
	var in struct {
		UserID    string `json:"user_id"`
		PostID    string `json:"post_id"`
		EmojiName string `json:"emoji_name"`
	}
	_ = json.Unmarshal(body, &in)
	p.mu.Lock()
	if in.UserID != BotID || p.byID[in.PostID] == nil || in.EmojiName == "" {
		p.mu.Unlock()
		apiError(w, http.StatusBadRequest, "api.context.invalid_body_param.app_error", "Invalid or missing reaction in request body.")
		return
	}
	p.reactions[in.PostID] = append(p.reactions[in.PostID], "+"+in.EmojiName)
	p.mu.Unlock()
	peerkit.WriteJSON(w, http.StatusOK, in)
	p.React(Bot, in.PostID, in.EmojiName) // Mattermost tells every member, the bot too
}

func (p *Peer) unreact(w http.ResponseWriter, r *http.Request, _ []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pid := r.PathValue("pid")
	p.reactions[pid] = append(p.reactions[pid], "-"+r.PathValue("emoji"))
	peerkit.WriteJSON(w, http.StatusOK, map[string]string{"status": "OK"})
}

// apiError is Mattermost's error body.
func apiError(w http.ResponseWriter, status int, id, message string) {
	peerkit.WriteJSON(w, status, map[string]any{"id": id, "message": message, "detailed_error": "", "request_id": "peer", "status_code": status})
}
