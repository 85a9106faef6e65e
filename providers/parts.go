package providers

import (
	"bytes"
	"encoding/json"
	"strings"
)

// contentPart is one element of a message's raw multimodal content, read
// by the dialects that reshape it (Anthropic, Responses).
type contentPart struct {
	text    string // a text part
	image   string // an image_url part's URL (often a data URL)
	foreign string // any other part, as its JSON
}

// partsOf reads a message's parts, or its plain text; empty text parts
// are dropped and a message with nothing left is "(empty)".
func partsOf(content string, raw []byte) []contentPart {
	var out []contentPart
	var parts []json.RawMessage
	if len(raw) > 0 && json.Unmarshal(raw, &parts) == nil {
		for _, r := range parts {
			var p struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
			}
			if json.Unmarshal(r, &p) != nil {
				continue
			}
			switch {
			case p.Type == "text":
				if p.Text != "" {
					out = append(out, contentPart{text: p.Text})
				}
			case p.Type == "image_url":
				if p.ImageURL.URL != "" {
					out = append(out, contentPart{image: p.ImageURL.URL})
				}
			default:
				out = append(out, contentPart{foreign: string(bytes.TrimSpace(r))})
			}
		}
	} else if strings.TrimSpace(content) != "" {
		out = append(out, contentPart{text: content})
	}
	if len(out) == 0 {
		out = append(out, contentPart{text: emptyContent})
	}
	return out
}
