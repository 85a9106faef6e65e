package memory

import "context"

// Archive is where consolidated history and Dream's cursor live: the
// workspace's files (Files, the default) or a database shared by many hosts.
// Both keep nanobot's rules: cursors only grow, an entry's ID is stored
// once, the newest MaxHistoryEntries are kept, and the Dream cursor moves
// by compare-and-set.
type Archive interface {
	// Append adds an entry with the next cursor; an entry whose ID is there is returned as stored.
	Append(ctx context.Context, e Entry) (Entry, error)
	// Entries returns the archive, oldest first.
	Entries(ctx context.Context) ([]Entry, error)
	// Find returns the entry with the given ID.
	Find(ctx context.Context, id string) (Entry, bool, error)
	// Cursor is the last cursor Dream absorbed (0: none yet).
	Cursor(ctx context.Context) (int, error)
	// AdvanceCursor moves the Dream cursor from from to to, and only from
	// there; moving it again to where it is reports true (a retry).
	AdvanceCursor(ctx context.Context, from, to int) (bool, error)
	// File is the archive's file, for the model to grep ("" when it is no file).
	File() string
}

// Files is the archive in the workspace: memory/history.jsonl and memory/.dream_cursor.
type Files struct{ Workspace string }

var _ Archive = Files{}

// Append implements Archive.
func (f Files) Append(_ context.Context, e Entry) (Entry, error) { return Append(f.Workspace, e) }

// Entries implements Archive.
func (f Files) Entries(context.Context) ([]Entry, error) { return Read(f.Workspace) }

// Find implements Archive.
func (f Files) Find(_ context.Context, id string) (Entry, bool, error) { return Find(f.Workspace, id) }

// Cursor implements Archive.
func (f Files) Cursor(context.Context) (int, error) { return ReadCursor(f.Workspace) }

// AdvanceCursor implements Archive.
func (f Files) AdvanceCursor(_ context.Context, from, to int) (bool, error) {
	return AdvanceCursor(f.Workspace, from, to)
}

// File implements Archive.
func (f Files) File() string { return HistoryPath(f.Workspace) }
