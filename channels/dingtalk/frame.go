package dingtalk

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// DingTalk's Stream mode, as its documentation ("Stream 模式说明") lays it
// out: the app registers a connection over HTTPS and gets an endpoint and
// a one-time ticket; it opens a WebSocket to endpoint?ticket=…; the server
// pushes frames of three types and the app answers each one that needs it
// with a response frame naming the pushed frame's messageId.

// Frame types.
const (
	frameSystem   = "SYSTEM"
	frameEvent    = "EVENT"
	frameCallback = "CALLBACK"
)

// SYSTEM topics.
const (
	topicConnected  = "CONNECTED"
	topicRegistered = "REGISTERED"
	topicDisconnect = "disconnect"
	topicKeepalive  = "KEEPALIVE"
	topicPing       = "ping"
)

// topicRobotMessage is the CALLBACK topic of messages sent to the robot.
const topicRobotMessage = "/v1.0/im/bot/messages/get"

// openPath registers a Stream connection (POST, JSON).
const openPath = "/v1.0/gateway/connections/open"

// subscription is one topic the connection asks for.
type subscription struct {
	Type  string `json:"type"`
	Topic string `json:"topic"`
}

// openRequest is the registration's body.
type openRequest struct {
	ClientID      string         `json:"clientId"`
	ClientSecret  string         `json:"clientSecret"`
	Subscriptions []subscription `json:"subscriptions"`
	UA            string         `json:"ua"`
}

// openResponse is where to connect, and the ticket to connect with.
type openResponse struct {
	Endpoint string `json:"endpoint"`
	Ticket   string `json:"ticket"`
}

// subscriptions are the topics the channel takes: robot messages only.
func subscriptions() []subscription {
	return []subscription{{Type: frameCallback, Topic: topicRobotMessage}}
}

// frameHeaders are a pushed frame's headers (a response carries messageId
// and contentType back).
type frameHeaders struct {
	AppID        string `json:"appId,omitempty"`
	ConnectionID string `json:"connectionId,omitempty"`
	ContentType  string `json:"contentType,omitempty"`
	MessageID    string `json:"messageId"`
	Time         string `json:"time,omitempty"`
	Topic        string `json:"topic,omitempty"`
}

// frame is one frame the server pushes; data is a JSON document in a string.
type frame struct {
	SpecVersion string       `json:"specVersion"`
	Type        string       `json:"type"`
	Headers     frameHeaders `json:"headers"`
	Data        string       `json:"data"`
}

// response answers a pushed frame: code 200 and the frame's messageId.
type response struct {
	Code    int          `json:"code"`
	Headers frameHeaders `json:"headers"`
	Message string       `json:"message"`
	Data    string       `json:"data"`
}

// decodeFrame reads one pushed frame; a frame without a type or a
// messageId cannot be answered and is refused.
func decodeFrame(raw []byte) (frame, error) {
	var f frame
	if err := json.Unmarshal(raw, &f); err != nil {
		return f, fmt.Errorf("not a stream frame: %w", err)
	}
	if !utf8.Valid(raw) {
		return f, errors.New("stream frame not valid UTF-8")
	}
	if f.Type == "" || f.Headers.MessageID == "" {
		return f, errors.New("stream frame without type or messageId")
	}
	return f, nil
}

// pong answers a ping with the same headers and data.
func pong(f frame) response {
	return response{Code: 200, Headers: f.Headers, Message: "OK", Data: f.Data}
}

// ack tells the server a callback was taken (it redelivers unacknowledged
// ones); the data is {"response": …} as the SDKs write it.
func ack(f frame) response {
	data, _ := json.Marshal(map[string]any{"response": map[string]any{}})
	return response{Code: 200, Headers: frameHeaders{ContentType: "application/json", MessageID: f.Headers.MessageID},
		Message: "OK", Data: string(data)}
}
