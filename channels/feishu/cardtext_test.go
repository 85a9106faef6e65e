package feishu

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/feishu/feishupeer"
)

// nanobot's test_feishu_card_extraction, in Go.
func TestCardTextIsExtracted(t *testing.T) {
	card := map[string]any{
		"header": map[string]any{"title": map[string]any{"tag": "plain_text", "content": "Weekly"}},
		"elements": []any{
			map[string]any{"tag": "markdown", "content": "**done**: 3"},
			map[string]any{"tag": "div", "text": map[string]any{"tag": "lark_md", "content": "a div"},
				"fields": []any{map[string]any{"text": map[string]any{"content": "a field"}}}},
			map[string]any{"tag": "action", "actions": []any{}, "elements": []any{
				map[string]any{"tag": "button", "text": map[string]any{"content": "Open"}, "multi_url": map[string]any{"url": "https://example.invalid/b"}}}},
			map[string]any{"tag": "note", "elements": []any{map[string]any{"tag": "plain_text", "content": "a note"}}},
			map[string]any{"tag": "column_set", "columns": []any{map[string]any{"elements": []any{map[string]any{"tag": "img", "img_key": "k"}}}}},
			map[string]any{"tag": "table", "columns": []any{map[string]any{"name": "c0", "display_name": "Name"}, map[string]any{"name": "c1"}},
				"rows": []any{map[string]any{"c0": "Alice", "c1": []any{"x", "y"}}}},
		},
	}
	require.Equal(t, "**done**: 3\na div\na field\nOpen\nlink: https://example.invalid/b\na note\n[image]\nName | c1\nAlice | x y\ntitle: Weekly", cardText(card))
	v2 := map[string]any{"schema": "2.0", "body": map[string]any{"elements": []any{map[string]any{"tag": "markdown", "content": "v2 body"}}}}
	require.Equal(t, "v2 body", cardText(v2))
	dsl := map[string]any{"user_dsl": `{"elements":[{"tag":"markdown","content":"from the dsl"}]}`, "elements": []any{map[string]any{"tag": "text", "text": "rendered"}}}
	require.Equal(t, "from the dsl", cardText(dsl), "a rendered card is read from its definition")
}

func TestForwardedCardAndAQuotedAnswer(t *testing.T) {
	h := startHarness(t, nil)
	h.peer.Say(feishupeer.Incoming{Sender: alice, Type: "interactive", Content: map[string]any{
		"title": "Build", "elements": []any{[]any{map[string]any{"tag": "text", "text": "passed"}}}}})
	require.Equal(t, "title: Build\npassed", h.WaitPublished(1)[0].Content)

	id, err := h.Ch.SendPart(context.Background(), reply(alice.OpenID, "", "t1", "the **answer**"), partOf("the **answer**"))
	require.NoError(t, err)
	h.peer.Say(feishupeer.Incoming{Sender: alice, Text: "why?", ParentID: id})
	require.Equal(t, "[Reply to: the **answer**]\nwhy?", h.WaitPublished(2)[1].Content, "a reply to the bot's card quotes it")
}
