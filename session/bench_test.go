package session

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nanobot-durable/nanobot/chat"
)

// benchAppend journals one message into a session already holding n.
func benchAppend(b *testing.B, n int) {
	s, err := NewJSONLStore(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	text := strings.Repeat("a typical message of some length. ", 10)
	var seed []chat.Message
	for i := 0; i < n; i++ {
		seed = append(seed, chat.Message{Role: chat.RoleUser, Content: text, Turn: "seed", EntryID: fmt.Sprint(i)})
	}
	if _, err := s.Append(ctx, "cli:b", seed...); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Append(ctx, "cli:b", chat.Message{Role: chat.RoleUser, Content: text, Turn: "t", EntryID: fmt.Sprint(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend100(b *testing.B)  { benchAppend(b, 100) }
func BenchmarkAppend2000(b *testing.B) { benchAppend(b, 2000) }

// BenchmarkRewrite2000 is the full atomic rewrite that SAVE and commands
// use, beside the append path of BenchmarkAppend2000.
func BenchmarkRewrite2000(b *testing.B) {
	s, err := NewJSONLStore(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	text := strings.Repeat("a typical message of some length. ", 10)
	var seed []chat.Message
	for i := 0; i < 2000; i++ {
		seed = append(seed, chat.Message{Role: chat.RoleUser, Content: text, Turn: "seed", EntryID: fmt.Sprint(i)})
	}
	if _, err := s.Append(ctx, "cli:b", seed...); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := s.Update(ctx, "cli:b", func(sess *Session) error {
			sess.Messages = append(sess.Messages, chat.Message{Role: chat.RoleUser, Content: text, Turn: "t", EntryID: fmt.Sprint(i)})
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
