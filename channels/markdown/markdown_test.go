package markdown

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRenderConcurrently: the shared parser serves goroutines at once
// (go test -race tells).
func TestRenderConcurrently(t *testing.T) {
	const md = "# T\n\n**a** [b](https://x) `c`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] d"
	want := TelegramHTML(md)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				require.Equal(t, want, TelegramHTML(md))
			}
		})
	}
	wg.Wait()
}

// renderCase is one row of a renderer's table: Markdown and what it gives.
type renderCase struct{ name, md, want string }

// checkRender runs a renderer's table.
func checkRender(t *testing.T, render func(string) string, cases []renderCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, render(c.md))
		})
	}
}

// checkTags reads s as HTML: every <, > and & must be part of a tag or an
// entity, and closing tags must match; judge sees each opening tag with
// the names of the tags open around it. A void tag opens nothing.
func checkTags(s string, void func(name string) bool, judge func(tag, name, attr string, stack []string) error) error {
	var stack []string
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '>':
			return fmt.Errorf("raw > at %d", i)
		case '&':
			if !hasEntity(s[i:]) {
				return fmt.Errorf("raw & at %d", i)
			}
			continue
		case '<':
		default:
			continue
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			return fmt.Errorf("raw < at %d", i)
		}
		tag := s[i+1 : i+end]
		i += end
		if name, ok := strings.CutPrefix(tag, "/"); ok {
			if len(stack) == 0 || stack[len(stack)-1] != name {
				return fmt.Errorf("closing %s does not match %v", tag, stack)
			}
			stack = stack[:len(stack)-1]
			continue
		}
		name, attr, _ := strings.Cut(tag, " ")
		if err := judge(tag, name, attr, stack); err != nil {
			return err
		}
		if !void(name) {
			stack = append(stack, name)
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %v", stack)
	}
	return nil
}

// hasEntity reports s starting with one of the entities the renderers write.
func hasEntity(s string) bool {
	for _, e := range []string{"&amp;", "&lt;", "&gt;", "&quot;"} {
		if strings.HasPrefix(s, e) {
			return true
		}
	}
	return false
}
