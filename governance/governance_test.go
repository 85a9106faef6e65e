package governance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/tokens"
)

func sys(s string) chat.Message  { return chat.Message{Role: chat.RoleSystem, Content: s} }
func user(s string) chat.Message { return chat.Message{Role: chat.RoleUser, Content: s} }
func asst(s string) chat.Message { return chat.Message{Role: chat.RoleAssistant, Content: s} }
func calls(ids ...string) chat.Message {
	m := chat.Message{Role: chat.RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: id, Type: "function", Function: chat.FunctionCall{Name: "read_file", Arguments: "{}"}})
	}
	return m
}
func result(id, text string) chat.Message {
	return chat.Message{Role: chat.RoleTool, ToolCallID: id, Name: "read_file", Content: text}
}

// shape renders messages compactly: role, tool ids, and the first content chars.
func shape(msgs []chat.Message) []string {
	var out []string
	for _, m := range msgs {
		s := m.Role
		for _, c := range m.ToolCalls {
			s += "+" + c.ID
		}
		if m.ToolCallID != "" {
			s += "#" + m.ToolCallID
		}
		if c := m.Content; c != "" {
			if len(c) > 12 {
				c = c[:12]
			}
			s += ":" + c
		}
		out = append(out, s)
	}
	return out
}

func TestPrepareRules(t *testing.T) {
	malformed := chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "x", Function: chat.FunctionCall{Name: ""}}}}
	cases := []struct {
		name string
		in   []chat.Message
		opts Options
		want []string
	}{
		{"placeholder assistant stripped", []chat.Message{user("q"), asst(ModelErrorPlaceholder), user("again")}, Options{},
			[]string{"user:q", "user:again"}},
		{"malformed call stripped", []chat.Message{user("q"), malformed, asst("a")}, Options{},
			[]string{"user:q", "assistant:a"}},
		{"orphan result dropped", []chat.Message{user("q"), result("ghost", "x"), asst("a")}, Options{},
			[]string{"user:q", "assistant:a"}},
		{"duplicate result dropped", []chat.Message{user("q"), calls("a"), result("a", "1"), result("a", "2"), asst("done")}, Options{},
			[]string{"user:q", "assistant+a", "tool#a:1", "assistant:done"}},
		{"missing result backfilled", []chat.Message{user("q"), calls("a", "b"), result("a", "1"), asst("done")}, Options{},
			[]string{"user:q", "assistant+a+b", "tool#a:1", "tool#b:" + BackfillText[:12], "assistant:done"}},
		{"tool result capped", []chat.Message{user("q"), calls("a"), {Role: chat.RoleTool, ToolCallID: "a", Name: "exec", Content: strings.Repeat("x", 50)}}, Options{MaxToolResultChars: 10},
			[]string{"user:q", "assistant+a", "tool#a:xxxxxxxxxx\n."}},
		{"read_file is exempt from the cap", []chat.Message{user("q"), calls("a"), result("a", strings.Repeat("x", 50))}, Options{MaxToolResultChars: 10},
			[]string{"user:q", "assistant+a", "tool#a:xxxxxxxxxxxx"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, shape(Prepare(tc.in, tc.opts)))
		})
	}
}

// quarterChars keeps these cases about governance, not the tokenizer:
// repeated filler letters would compress to a few BPE tokens.
func quarterChars(m chat.Message) int {
	n := len(m.Content)
	for _, tc := range m.ToolCalls {
		n += len(tc.Function.Name) + len(tc.Function.Arguments) + 16
	}
	return n/4 + 4
}

func TestMicrocompactOldestFirstToTarget(t *testing.T) {
	big := strings.Repeat("y", 4000) // ~1000 tokens each
	msgs := []chat.Message{sys("s"), user("q"), calls("a"), result("a", big), calls("b"), result("b", big), calls("c"), result("c", big), asst("ok")}
	budget := 2000
	out := Prepare(msgs, Options{Budget: budget, Count: quarterChars})
	require.Equal(t, fmt.Sprintf(compactedTextFormat, "read_file"), out[3].Content, "the oldest result goes first")
	require.Equal(t, fmt.Sprintf(compactedTextFormat, "read_file"), out[5].Content)
	require.Equal(t, big, out[7].Content, "compaction stops once under 0.85 × budget")
	require.LessOrEqual(t, Tokens(out, quarterChars), int(float64(budget)*InflightCompactTarget))
	require.Equal(t, big, msgs[3].Content, "the input is not modified")
}

func TestMicrocompactSkipsSmallAndUncompactable(t *testing.T) {
	small := strings.Repeat("z", MicrocompactMinChars-1)
	other := chat.Message{Role: chat.RoleTool, ToolCallID: "w", Name: "write_file", Content: strings.Repeat("w", 4000)}
	w := chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "w", Function: chat.FunctionCall{Name: "write_file"}}}}
	msgs := []chat.Message{user("q"), calls("a"), result("a", small), w, other}
	out := microcompact(append([]chat.Message(nil), msgs...), 10, quarterChars)
	require.Equal(t, small, out[2].Content)
	require.Equal(t, other.Content, out[4].Content)
}

func TestSnipKeepsSystemAndNewestFromAUserMessage(t *testing.T) {
	long := strings.Repeat("h", 400) // ~100 tokens
	msgs := []chat.Message{sys("system"), user(long), asst(long), user(long), asst(long), user("latest"), asst("reply")}
	out := Prepare(msgs, Options{Budget: 230, Count: quarterChars})
	require.Equal(t, []string{"system:system", "user:hhhhhhhhhhhh", "assistant:hhhhhhhhhhhh", "user:latest", "assistant:reply"}, shape(out))
	out = Prepare(msgs, Options{Budget: 30, Count: quarterChars})
	require.Equal(t, []string{"system:system", "user:latest", "assistant:reply"}, shape(out))
}

func TestSnipThenRepairsToolPairs(t *testing.T) {
	long := strings.Repeat("h", 800)
	msgs := []chat.Message{sys("s"), user("old"), calls("a"), result("a", "r"), asst(long), user("new"), calls("b"), result("b", "r2")}
	out := Prepare(msgs, Options{Budget: 60, Count: quarterChars})
	require.Equal(t, []string{"system:s", "user:new", "assistant+b", "tool#b:r2"}, shape(out))
}

func TestBudget(t *testing.T) {
	require.Equal(t, 200000-8192-1024, Budget(200000, 8192))
}

func FuzzPrepareKeepsToolPairsValid(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 1, 2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var msgs []chat.Message
		for i, op := range ops {
			id := fmt.Sprintf("c%d", int(op)%4)
			switch op % 5 {
			case 0:
				msgs = append(msgs, user(strings.Repeat("u", int(op))))
			case 1:
				msgs = append(msgs, calls(id))
			case 2:
				msgs = append(msgs, result(id, strings.Repeat("r", i*50)))
			case 3:
				msgs = append(msgs, asst(strings.Repeat("a", int(op))))
			case 4:
				msgs = append(msgs, sys("s"))
			}
		}
		out := Prepare(msgs, Options{Budget: 200, MaxToolResultChars: 300, Count: quarterChars})
		open := map[string]bool{}
		for i, m := range out {
			switch m.Role {
			case chat.RoleAssistant:
				for _, c := range m.ToolCalls {
					open[c.ID] = true
				}
				// every call is answered right after its assistant message
				j := i + 1
				answered := map[string]bool{}
				for ; j < len(out) && out[j].Role == chat.RoleTool; j++ {
					answered[out[j].ToolCallID] = true
				}
				for _, c := range m.ToolCalls {
					if !answered[c.ID] {
						t.Fatalf("call %s not answered in %v", c.ID, shape(out))
					}
				}
			case chat.RoleTool:
				if !open[m.ToolCallID] {
					t.Fatalf("orphan result %s in %v", m.ToolCallID, shape(out))
				}
				delete(open, m.ToolCallID)
			}
		}
	})
}

// Chinese text is about a token per character: a byte guess keeps too much
// history and the request overflows; the tokenizer's count does not.
func TestSnipCountsChineseWithTheTokenizer(t *testing.T) {
	zh := strings.Repeat("我们今天去公园散步，然后一起吃晚饭。", 6)
	var msgs []chat.Message
	msgs = append(msgs, sys("system"))
	for i := 0; i < 10; i++ {
		msgs = append(msgs, user(zh), asst(zh))
	}
	msgs = append(msgs, user("最后一个问题"))
	budget := 600
	out := Prepare(msgs, Options{Budget: budget})
	require.LessOrEqual(t, Tokens(out, tokens.For("").Message), budget)
	require.Greater(t, len(out), 2, "it still keeps what fits")
}
