package feishu

import (
	"encoding/json"

	"github.com/nanobot-durable/nanobot/channels/markdown"
)

// Cards are how the bot answers: the Markdown's tree laid out as card
// elements (markdown.FeishuCard). A card holds one table at most (Feishu's
// error 11310), so a text with more is sent as several cards.

// element is one card element, as Feishu's JSON has it.
type element = map[string]any

// splitByTables groups elements so each group has one table at most.
func splitByTables(els []element) [][]element {
	var groups [][]element
	var cur []element
	tables := 0
	for _, el := range els {
		if el["tag"] == "table" {
			if tables >= 1 {
				groups = append(groups, cur)
				cur, tables = nil, 0
			}
			tables++
		}
		cur = append(cur, el)
	}
	if len(cur) > 0 || len(groups) == 0 {
		groups = append(groups, cur)
	}
	return groups
}

// cards are the interactive cards showing md, one per table.
func cards(md string) []string {
	var out []string
	for _, g := range splitByTables(markdown.FeishuCard(md, -1)) {
		out = append(out, cardJSON(g))
	}
	return out
}

// oneCard shows md in a single card (a streamed message): one table drawn.
func oneCard(md string) string { return cardJSON(markdown.FeishuCard(md, 1)) }

// cardJSON is a card's content; update_multi lets the bot update it for
// everyone in the chat (streaming).
func cardJSON(els []element) string {
	return jsonString(map[string]any{"config": map[string]any{"wide_screen_mode": true, "update_multi": true}, "elements": els})
}

// jsonString is v as JSON text, as message contents are sent.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
