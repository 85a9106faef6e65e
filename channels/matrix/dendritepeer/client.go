package dendritepeer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// User is an account on the homeserver, logged in with its access token.
type User struct {
	ID       string // @name:localhost
	Token    string
	DeviceID string
	Password string
	h        *Homeserver
}

var txnCounter atomic.Int64

// RegisterUser creates the account name (password "password-"+name) through
// /_matrix/client/v3/register and its m.login.dummy stage.
func (h *Homeserver) RegisterUser(t testing.TB, name string) *User {
	t.Helper()
	password := "password-" + name
	body := map[string]any{"username": name, "password": password, "initial_device_display_name": name + "'s test device"}
	status, raw := h.do(t, http.MethodPost, "/_matrix/client/v3/register", "", body)
	if status == http.StatusUnauthorized { // the user-interactive stages: dummy is enough on this server
		var flows struct {
			Session string `json:"session"`
		}
		_ = json.Unmarshal(raw, &flows)
		body["auth"] = map[string]any{"type": "m.login.dummy", "session": flows.Session}
		status, raw = h.do(t, http.MethodPost, "/_matrix/client/v3/register", "", body)
	}
	if status != http.StatusOK {
		t.Fatalf("dendritepeer: register %s: HTTP %d %s", name, status, raw)
	}
	var resp struct {
		UserID      string `json:"user_id"`
		AccessToken string `json:"access_token"`
		DeviceID    string `json:"device_id"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatalf("dendritepeer: register %s: %v", name, err)
	}
	u := &User{ID: resp.UserID, Token: resp.AccessToken, DeviceID: resp.DeviceID, Password: password, h: h}
	h.mu.Lock()
	h.users[u.ID] = u
	h.mu.Unlock()
	return u
}

// do makes one client-server API call and returns its status and body;
// a 429 (rate limiting on) is waited out as the server says.
func (h *Homeserver) do(t testing.TB, method, path, token string, body any) (int, []byte) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		status, raw := h.doOnce(t, method, path, token, body)
		var limited struct {
			RetryAfterMS int `json:"retry_after_ms"`
		}
		if status != http.StatusTooManyRequests || attempt == 20 || json.Unmarshal(raw, &limited) != nil {
			return status, raw
		}
		time.Sleep(time.Duration(limited.RetryAfterMS+10) * time.Millisecond)
	}
}

func (h *Homeserver) doOnce(t testing.TB, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	contentType := "application/json"
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case rawUpload:
		rd, contentType = bytes.NewReader(b.data), b.contentType
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("dendritepeer: %s %s: %v", method, path, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, h.URL+path, rd)
	if err != nil {
		t.Fatalf("dendritepeer: %s %s: %v", method, path, err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("dendritepeer: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

type rawUpload struct {
	data        []byte
	contentType string
}

// call is do for this user, failing the test on anything but 200.
func (u *User) call(t testing.TB, method, path string, body any, into any) {
	t.Helper()
	status, raw := u.h.do(t, method, path, u.Token, body)
	if status != http.StatusOK {
		t.Fatalf("dendritepeer: %s %s as %s: HTTP %d %s", method, path, u.ID, status, raw)
	}
	if into != nil {
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatalf("dendritepeer: %s %s: %v (%s)", method, path, err, raw)
		}
	}
}

// SetDisplayName sets the user's display name.
func (u *User) SetDisplayName(t testing.TB, name string) {
	t.Helper()
	u.call(t, http.MethodPut, "/_matrix/client/v3/profile/"+url.PathEscape(u.ID)+"/displayname", map[string]any{"displayname": name}, nil)
}

// CreateRoom creates a room and invites others; direct marks it a DM
// (is_direct, trusted_private_chat) as Element does.
func (u *User) CreateRoom(t testing.TB, direct bool, invite ...*User) string {
	t.Helper()
	ids := make([]string, 0, len(invite))
	for _, o := range invite {
		ids = append(ids, o.ID)
	}
	body := map[string]any{"invite": ids, "is_direct": direct, "preset": "private_chat"}
	if direct {
		body["preset"] = "trusted_private_chat"
	}
	var resp struct {
		RoomID string `json:"room_id"`
	}
	u.call(t, http.MethodPost, "/_matrix/client/v3/createRoom", body, &resp)
	return resp.RoomID
}

// Invite invites another user into a room.
func (u *User) Invite(t testing.TB, roomID string, other *User) {
	t.Helper()
	u.call(t, http.MethodPost, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/invite", map[string]any{"user_id": other.ID}, nil)
}

// Join joins a room the user was invited to.
func (u *User) Join(t testing.TB, roomID string) {
	t.Helper()
	u.call(t, http.MethodPost, "/_matrix/client/v3/join/"+url.PathEscape(roomID), map[string]any{}, nil)
}

// Send sends any event content (raw JSON bytes or a value) and returns the event id.
func (u *User) Send(t testing.TB, roomID, eventType string, content any) string {
	t.Helper()
	txn := "peer-" + strconv.FormatInt(txnCounter.Add(1), 10)
	var resp struct {
		EventID string `json:"event_id"`
	}
	u.call(t, http.MethodPut, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/send/"+url.PathEscape(eventType)+"/"+txn, content, &resp)
	return resp.EventID
}

// SendText sends a plain m.text message.
func (u *User) SendText(t testing.TB, roomID, text string) string {
	t.Helper()
	return u.Send(t, roomID, "m.room.message", map[string]any{"msgtype": "m.text", "body": text})
}

// SendMention sends a message mentioning other the way Element does:
// its display name in the body and its id in m.mentions.
func (u *User) SendMention(t testing.TB, roomID string, other *User, name, text string) string {
	t.Helper()
	return u.Send(t, roomID, "m.room.message", map[string]any{
		"msgtype": "m.text", "body": name + ": " + text,
		"m.mentions": map[string]any{"user_ids": []string{other.ID}},
	})
}

// SendState sets a state event (m.room.encryption, a topic…).
func (u *User) SendState(t testing.TB, roomID, eventType, stateKey string, content any) {
	t.Helper()
	u.call(t, http.MethodPut, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/state/"+url.PathEscape(eventType)+"/"+url.PathEscape(stateKey), content, nil)
}

// Upload puts a file in the content repository and returns its mxc:// URI.
func (u *User) Upload(t testing.TB, data []byte, contentType, name string) string {
	t.Helper()
	var resp struct {
		ContentURI string `json:"content_uri"`
	}
	u.call(t, http.MethodPost, "/_matrix/media/v3/upload?filename="+url.QueryEscape(name), rawUpload{data, contentType}, &resp)
	return resp.ContentURI
}

// Download fetches an mxc:// URI from the content repository.
func (u *User) Download(t testing.TB, mxc string) []byte {
	t.Helper()
	parsed, err := url.Parse(mxc)
	if err != nil || parsed.Scheme != "mxc" {
		t.Fatalf("dendritepeer: %q is not an mxc URI", mxc)
	}
	status, raw := u.h.do(t, http.MethodGet, "/_matrix/client/v1/media/download/"+parsed.Host+parsed.Path, u.Token, nil)
	if status != http.StatusOK {
		t.Fatalf("dendritepeer: download %s: HTTP %d %s", mxc, status, raw)
	}
	return raw
}

// Joined tells whether other is a joined member of the room.
func (u *User) Joined(t testing.TB, roomID string, other *User) bool {
	t.Helper()
	var resp struct {
		Joined map[string]json.RawMessage `json:"joined"`
	}
	u.call(t, http.MethodGet, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/joined_members", nil, &resp)
	_, ok := resp.Joined[other.ID]
	return ok
}

// MemberName is other's display name in the room's state ("" if none).
func (u *User) MemberName(t testing.TB, roomID string, other *User) string {
	t.Helper()
	var resp struct {
		Name string `json:"displayname"`
	}
	u.call(t, http.MethodGet, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/state/m.room.member/"+url.PathEscape(other.ID), nil, &resp)
	return resp.Name
}

// Typing are the users shown typing in the room now (from a short sync).
func (u *User) Typing(t testing.TB, roomID string) []string {
	t.Helper()
	var resp struct {
		Rooms struct {
			Join map[string]struct {
				Ephemeral struct {
					Events []struct {
						Type    string `json:"type"`
						Content struct {
							UserIDs []string `json:"user_ids"`
						} `json:"content"`
					} `json:"events"`
				} `json:"ephemeral"`
			} `json:"join"`
		} `json:"rooms"`
	}
	u.call(t, http.MethodGet, "/_matrix/client/v3/sync?timeout=0", nil, &resp)
	for _, ev := range resp.Rooms.Join[roomID].Ephemeral.Events {
		if ev.Type == "m.typing" {
			return ev.Content.UserIDs
		}
	}
	return nil
}

// Describe names the user for failure messages.
func (u *User) String() string { return fmt.Sprintf("%s (device %s)", u.ID, u.DeviceID) }
