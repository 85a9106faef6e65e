package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode"
)

// chatRequest is a validated POST /v1/chat/completions body.
type chatRequest struct {
	Text      string
	Images    []image
	Stream    bool
	SessionID string // "" = nanobot's default session
}

// image is a picture sent inline as a base64 data URL.
type image struct {
	MIME string
	Data []byte
}

// Texts of nanobot's API, kept word for word: clients match on them.
const (
	msgSingleUser    = "Only a single user message is supported"
	msgInvalidJSON   = "Invalid JSON body"
	msgInvalidFormat = "Invalid content format"
	msgRemoteImage   = "Remote image URLs are not supported. Use base64 data URLs."
)

// maxSessionID bounds session_id: it becomes a file name and a workflow ID.
const maxSessionID = 128

// wireRequest is the body as sent; fields stay raw until each is checked,
// so a wrong type is a clear 400 and never a silent default.
type wireRequest struct {
	Model     json.RawMessage `json:"model"`
	Messages  json.RawMessage `json:"messages"`
	Stream    json.RawMessage `json:"stream"`
	SessionID json.RawMessage `json:"session_id"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// parseChatRequest checks a body as nanobot does: exactly one message, from
// the user; model omitted or the configured one; session_id selects api:<id>.
func parseChatRequest(body []byte, model string) (chatRequest, *apiError) {
	var req chatRequest
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return req, errp(badRequest(http.StatusBadRequest, msgInvalidJSON))
	}
	if !isNull(w.Stream) {
		if err := json.Unmarshal(w.Stream, &req.Stream); err != nil {
			return req, errp(badRequest(http.StatusBadRequest, "stream must be true or false"))
		}
	}
	var requested string
	if !isNull(w.Model) {
		if err := json.Unmarshal(w.Model, &requested); err != nil {
			return req, errp(badRequest(http.StatusBadRequest, "model must be a string"))
		}
	}
	text, images, e := parseMessages(w.Messages)
	if e != nil {
		return req, e
	}
	req.Text, req.Images = text, images
	if requested != "" && requested != model {
		return req, errp(badRequest(http.StatusBadRequest, fmt.Sprintf("Only configured model '%s' is available", model)))
	}
	if !isNull(w.SessionID) {
		if err := json.Unmarshal(w.SessionID, &req.SessionID); err != nil || (req.SessionID != "" && !validSessionID(req.SessionID)) {
			return req, errp(badRequest(http.StatusBadRequest,
				fmt.Sprintf("session_id must be a string of at most %d characters without control characters", maxSessionID)))
		}
	}
	return req, nil
}

// parseMessages takes the one user message apart into its text and images.
func parseMessages(raw json.RawMessage) (string, []image, *apiError) {
	single := errp(badRequest(http.StatusBadRequest, msgSingleUser))
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil || len(msgs) != 1 {
		return "", nil, single
	}
	var m wireMessage
	if err := json.Unmarshal(msgs[0], &m); err != nil || m.Role != "user" {
		return "", nil, single
	}
	if len(m.Content) == 0 {
		return "", nil, errp(badRequest(http.StatusBadRequest, "The user message has no content"))
	}
	if isNull(m.Content) {
		return "", nil, errp(badRequest(http.StatusBadRequest, msgInvalidFormat))
	}
	var text string
	if err := json.Unmarshal(m.Content, &text); err == nil {
		return nonEmpty(text, nil)
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", nil, errp(badRequest(http.StatusBadRequest, msgInvalidFormat))
	}
	var texts []string
	var images []image
	for _, rawPart := range parts {
		var p wirePart
		if json.Unmarshal(rawPart, &p) != nil {
			continue // nanobot skips parts that are not objects
		}
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "image_url":
			url := p.ImageURL.URL
			if url == "" {
				continue
			}
			if !strings.HasPrefix(url, "data:") {
				return "", nil, errp(badRequest(http.StatusBadRequest, msgRemoteImage))
			}
			img, err := decodeDataURL(url)
			if err != nil {
				return "", nil, errp(badRequest(http.StatusBadRequest, err.Error()))
			}
			images = append(images, img)
		}
	}
	return nonEmpty(strings.Join(texts, " "), images)
}

// nonEmpty refuses a message with nothing in it: the model would get a blank turn.
func nonEmpty(text string, images []image) (string, []image, *apiError) {
	if strings.TrimSpace(text) == "" && len(images) == 0 {
		return "", nil, errp(badRequest(http.StatusBadRequest, "The user message has no content"))
	}
	return text, images, nil
}

// decodeDataURL reads data:image/<type>;base64,<data>.
func decodeDataURL(url string) (image, error) {
	head, data, ok := strings.Cut(strings.TrimPrefix(url, "data:"), ",")
	mime, isBase64 := strings.CutSuffix(head, ";base64")
	if !ok || !isBase64 || !strings.HasPrefix(mime, "image/") {
		return image{}, fmt.Errorf("image_url must be a base64 data URL of an image (data:image/png;base64,…)")
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(data)
	}
	if err != nil || len(b) == 0 {
		return image{}, fmt.Errorf("image_url holds invalid base64 data")
	}
	return image{MIME: mime, Data: b}, nil
}

func validSessionID(id string) bool {
	if len(id) > maxSessionID {
		return false
	}
	for _, r := range id {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

func errp(e apiError) *apiError { return &e }
