package activities

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/protocol"
)

// maxInlineImage bounds an image sent to the model inline (as a data URL).
const maxInlineImage = 10 << 20

// imageOmitted stands in for an image the model would not take.
const imageOmitted = "[image omitted]"

// userContent is the journaled form of a user message with files: the
// text with a line naming each file ("[image: path]", "[file: path]"), so
// the model can hand it to tools; images also as image parts first, as
// nanobot's build_user_content does. SAVE later swaps the data URLs in the
// file for "[image]". A transcribed voice note is "[transcription: text]"
// and one that was not is "[voice: path]", as nanobot's channels put them.
func userContent(text string, media []string, heard map[string]protocol.Transcript) (string, []byte) {
	if len(media) == 0 {
		return text, nil
	}
	lines := []string{text}
	var parts []map[string]any
	for _, p := range media {
		if t, ok := heard[p]; ok {
			if t.Text != "" {
				lines = append(lines, "[transcription: "+t.Text+"]")
			} else {
				lines = append(lines, "[voice: "+p+"]")
			}
			continue
		}
		url, ok := imageDataURL(p)
		if !ok {
			lines = append(lines, "[file: "+p+"]")
			continue
		}
		lines = append(lines, "[image: "+p+"]")
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}})
	}
	content := strings.TrimSpace(strings.Join(lines, "\n"))
	if len(parts) == 0 {
		return content, nil
	}
	parts = append(parts, map[string]any{"type": "text", "text": content})
	raw, err := json.Marshal(parts)
	if err != nil {
		return content, nil
	}
	return content, raw
}

// heardAt keys the transcripts, journaled by the message's refs, by the
// paths this host reads those files at.
func heardAt(heard map[string]protocol.Transcript, refs, paths []string) map[string]protocol.Transcript {
	if len(heard) == 0 {
		return heard
	}
	out := make(map[string]protocol.Transcript, len(heard))
	for i, ref := range refs {
		if t, ok := heard[ref]; ok {
			out[paths[i]] = t
		}
	}
	return out
}

// imageDataURL reads an image file as a data URL; false for anything that
// is not a JPEG, PNG, GIF or WebP image of a sendable size.
func imageDataURL(path string) (string, bool) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > maxInlineImage {
		return "", false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	mime := http.DetectContentType(data)
	switch mime {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data), true
	}
	return "", false
}

// withTextPart appends a text part to multimodal content.
func withTextPart(raw []byte, text string) []byte {
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return raw
	}
	part, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	out, err := json.Marshal(append(parts, part))
	if err != nil {
		return raw
	}
	return out
}

// withoutImages replaces every image part with "[image omitted]", for a
// model that refuses images (nanobot's _strip_image_content); false when
// there was none.
func withoutImages(msgs []chat.Message) ([]chat.Message, bool) {
	out := make([]chat.Message, len(msgs))
	found := false
	for i, m := range msgs {
		out[i] = m
		if len(m.ContentParts) == 0 || !strings.Contains(string(m.ContentParts), `"image_url"`) {
			continue
		}
		var parts []map[string]any
		if json.Unmarshal(m.ContentParts, &parts) != nil {
			continue
		}
		for _, p := range parts {
			if p["type"] == "image_url" {
				delete(p, "image_url")
				p["type"], p["text"] = "text", imageOmitted
				found = true
			}
		}
		if raw, err := json.Marshal(parts); err == nil {
			out[i].ContentParts = raw
		}
	}
	return out, found
}
