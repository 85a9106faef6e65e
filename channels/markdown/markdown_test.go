package markdown

import (
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
