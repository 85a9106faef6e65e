package diskgc

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nanobot-durable/nanobot/pgstore"
)

// DirBytes is the size of the regular files under dir (0 when it is missing).
func DirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a missing dir, or a file removed meanwhile
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// SQLiteFile is the size of a SQLite database with its WAL, and how much
// of it is free pages that only a VACUUM gives back.
type SQLiteFile struct {
	Bytes     int64 // the file, its -wal and -shm
	FreeBytes int64 // pages on the free list
}

// ReadSQLiteFile reads the sizes from the file's header, without opening
// it as a database, so a running server is not disturbed.
func ReadSQLiteFile(path string) (SQLiteFile, error) {
	var out SQLiteFile
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if st, err := os.Stat(path + suffix); err == nil {
			out.Bytes += st.Size()
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	hdr := make([]byte, 100)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return out, err
	}
	if string(hdr[:16]) != "SQLite format 3\x00" {
		return out, errors.New(path + ": not a SQLite database")
	}
	page := int64(binary.BigEndian.Uint16(hdr[16:18]))
	if page == 1 {
		page = 65536
	}
	out.FreeBytes = page * int64(binary.BigEndian.Uint32(hdr[36:40]))
	return out, nil
}

// Places are where a process's state lives on disk.
type Places struct {
	SessionsDir, MediaDir, TempDir, MemoryDir string
	// TemporalDB is the embedded Temporal's SQLite file ("" = an external server).
	TemporalDB string
	// DB holds the state instead of the files when set.
	DB *pgstore.DB
}

// Use is one kind's size.
type Use struct {
	Kind  string
	Bytes int64
	// Note says where, or what part could be reclaimed.
	Note string
}

// Usage measures each kind of state. On the database, sessions, media and
// memory are the tables holding them.
func Usage(ctx context.Context, p Places) ([]Use, error) {
	var out []Use
	var errs []error
	table := func(kind string, tables ...string) {
		n, err := p.DB.TableBytes(ctx, tables...)
		errs = append(errs, err)
		out = append(out, Use{Kind: kind, Bytes: n, Note: "PostgreSQL " + p.DB.Where()})
	}
	if p.DB != nil {
		table(KindSessions, "sessions", "session_messages", "session_claims", "session_turn_data")
		table(KindMedia, "media")
		out[len(out)-1].Bytes += DirBytes(p.MediaDir) // the workspace host's own files come first
	} else {
		out = append(out, Use{Kind: KindSessions, Bytes: DirBytes(p.SessionsDir), Note: p.SessionsDir},
			Use{Kind: KindMedia, Bytes: DirBytes(p.MediaDir), Note: p.MediaDir})
	}
	out = append(out, Use{Kind: KindTemp, Bytes: DirBytes(p.TempDir), Note: p.TempDir})
	if p.TemporalDB != "" {
		u := Use{Kind: KindTemporal, Note: p.TemporalDB}
		if f, err := ReadSQLiteFile(p.TemporalDB); err == nil {
			u.Bytes = f.Bytes
			u.Note += " (" + HumanBytes(f.FreeBytes) + " free pages, given back when it next starts)"
		} else if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		out = append(out, u)
	}
	if p.DB != nil {
		table(KindMemory, "memory_history", "memory_state")
		out[len(out)-1].Bytes += DirBytes(p.MemoryDir)
	} else {
		out = append(out, Use{Kind: KindMemory, Bytes: DirBytes(p.MemoryDir), Note: p.MemoryDir})
	}
	return out, errors.Join(errs...)
}

// HumanBytes writes n in B, KiB, MiB or GiB with one decimal.
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmtInt(n) + " B"
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + suffix
}

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }
