package providers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStripThink(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain answer", "plain answer"},
		{"<think>plan</think>Hello", "Hello"},
		{"Hello<think>aside</think> world", "Hello world"},
		{"<thinking>x</thinking>\n\nAnswer", "Answer"},
		{"<thought>x</thought>Answer", "Answer"},
		{"<think>a</think>one<think>b</think>two", "onetwo"},
		{"<think>a</thinking>b", ""}, // mismatched closer: an unclosed block at the start
		{"<think>unfinished reasoning", ""},
		{"  \n<thinking>still going", ""},
		{"x <thinking>y", "x <thinking>y"}, // unclosed mid-text opener is kept, as in nanobot
		{"</think>Answer", "Answer"},
		{"Answer</think>", "Answer"},
		{"Answer</thought>\n", "Answer"},
		{"Mentions </think> in the middle", "Mentions </think> in the middle"},
		{"Answer <think", "Answer"},
		{"<think广场 hello", "广场 hello"},
		{"<thinkingX stays", "<thinkingX stays"},
		{"Answer <th", "Answer"},
		{"Answer </thi", "Answer"},
		{"Answer <thou\n", "Answer"},
		{"<thinking/>Answer", "Answer"},
		{"Answer <thinking/>", "Answer"},
		{"<channel|>Hello", "Hello"},
		{"<|channel|>Hello", "Hello"},
		{"Hello <|chan", "Hello"},
		{"a < b and c > d", "a < b and c > d"},
		{"<", ""},
		{"  <|", ""},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, StripThink(tc.in), "StripThink(%q)", tc.in)
	}
}

func TestExtractThink(t *testing.T) {
	reasoning, visible := ExtractThink("<think>\n first \n</think>Answer<thought>second</thought>")
	require.Equal(t, "first\n\nsecond", reasoning)
	require.Equal(t, "Answer", visible)

	reasoning, visible = ExtractThink("<think>never closed")
	require.Empty(t, reasoning, "only closed blocks are reasoning")
	require.Empty(t, visible)
}

func TestStripReasoningTags(t *testing.T) {
	require.Equal(t, "plan", stripReasoningTags("<think>\nplan\n</think>"))
	require.Equal(t, "plan", stripReasoningTags("<thinking/> plan"))
	require.Equal(t, "plan", stripReasoningTags("plan </thi"))
}

// splitAll feeds text in chunks of size n.
func splitAll(text string, n int) (visible, reasoning string) {
	var s thinkSplitter
	var vis, rea strings.Builder
	for i := 0; i < len(text); i += n {
		v, r := s.feed(text[i:min(i+n, len(text))])
		vis.WriteString(v)
		rea.WriteString(r)
	}
	v, r := s.flush()
	vis.WriteString(v)
	rea.WriteString(r)
	return vis.String(), rea.String()
}

func TestThinkSplitterAnyChunking(t *testing.T) {
	cases := []struct{ in, visible, reasoning string }{
		{"<think>plan A</think>\n\nThe answer", "The answer", "plan A"},
		{"Hi <thinking>x</thinking> there", "Hi there", "x"},
		{"a <b> c <t d", "a <b> c <t d", ""},
		{"x<thought>y", "x", "y"},
		{"no tags at all", "no tags at all", ""},
		{"<think>a</think>b<think>c</think>d", "bd", "ac"},
		{"<think>not </thought> the end</think>ok", "ok", "not </thought> the end"},
	}
	for _, tc := range cases {
		for n := 1; n <= len(tc.in); n++ {
			v, r := splitAll(tc.in, n)
			require.Equal(t, tc.visible, v, "visible of %q in chunks of %d", tc.in, n)
			require.Equal(t, tc.reasoning, r, "reasoning of %q in chunks of %d", tc.in, n)
		}
	}
}

func TestThinkSplitterDoesNotHoldPlainText(t *testing.T) {
	var s thinkSplitter
	v, _ := s.feed("Hello wor")
	require.Equal(t, "Hello wor", v, "text without '<' is released at once")
	v, _ = s.feed("ld <")
	require.Equal(t, "ld ", v, "a possible tag start waits")
	v, _ = s.feed("3")
	require.Equal(t, "<3", v)
}
