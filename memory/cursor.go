package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// ReadCursor returns the last history cursor Dream absorbed (0: none yet).
func ReadCursor(workspace string) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	return readCursor(workspace)
}

func readCursor(workspace string) (int, error) {
	data, err := os.ReadFile(CursorPath(workspace))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read dream cursor: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("dream cursor %q is not a number", strings.TrimSpace(string(data)))
	}
	return n, nil
}

// AdvanceCursor moves the Dream cursor from from to to, and only from
// there: a Dream that raced another one finds the cursor moved and says so.
func AdvanceCursor(workspace string, from, to int) (bool, error) {
	moved := false
	err := locked(workspace, func() error {
		cur, err := readCursor(workspace)
		if err != nil {
			return err
		}
		if cur == to {
			moved = true // a retry of a move that already happened
			return nil
		}
		if cur != from {
			return nil
		}
		moved = true
		return atomicfile.Write(CursorPath(workspace), []byte(strconv.Itoa(to)+"\n"), 0o644)
	})
	return moved, err
}

// Unprocessed returns up to limit entries after the Dream cursor, oldest first.
func Unprocessed(ctx context.Context, a Archive, limit int) (cursor int, entries []Entry, err error) {
	cursor, err = a.Cursor(ctx)
	if err != nil {
		return 0, nil, err
	}
	all, err := a.Entries(ctx)
	if err != nil {
		return 0, nil, err
	}
	for _, e := range all {
		if e.Cursor > cursor {
			entries = append(entries, e)
			if len(entries) == limit {
				break
			}
		}
	}
	return cursor, entries, nil
}
