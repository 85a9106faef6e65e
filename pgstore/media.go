package pgstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/nanobot-durable/nanobot/atomicfile"
	"github.com/nanobot-durable/nanobot/media"
)

// Media is media.Store on the database: a shared file's bytes are a row
// under its ref, and a host that lacks the file writes it once into dir.
type Media struct {
	db       *DB
	instance string
	own, dir string
}

var _ media.Store = (*Media)(nil)

// Media is the instance's media store on a host whose own files are under
// own (its configured workspace, where its channels save and its tools
// write); files it fetches go into dir (media.Dir). A shared ref outside
// own is another host's path: it is never read here, even when a path of
// that name exists, since only a shared disk would make it the same file.
func (db *DB) Media(instance, own, dir string) *Media {
	return &Media{db: db, instance: instance, own: own, dir: dir}
}

// Share stores the file at path under its path, once: the same bytes again
// send nothing, changed bytes (a name a channel reused) replace the row.
func (m *Media) Share(ctx context.Context, path string) error {
	if media.IsURL(path) {
		return nil
	}
	data, err := readShared(path)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	var have []byte
	err = m.db.pool.QueryRow(ctx, `SELECT sha256 FROM media WHERE instance = $1 AND ref = $2`, m.instance, path).Scan(&have)
	switch {
	case err == nil && bytes.Equal(have, sum[:]):
		return nil
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("share media %s on %s: %w", path, m.db.where, err)
	}
	_, err = m.db.pool.Exec(ctx, `INSERT INTO media (instance, ref, size, sha256, data) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (instance, ref) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256, data = excluded.data, created_at = now()
		WHERE media.sha256 <> excluded.sha256`, m.instance, path, int64(len(data)), sum[:], data)
	if err != nil {
		return fmt.Errorf("share media %s on %s: %w", path, m.db.where, err)
	}
	return nil
}

// readShared reads a regular file of at most media.MaxShared bytes.
func readShared(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("share media: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, fmt.Errorf("share media: %w", err)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("share media %s: not a regular file", path)
	case st.Size() > media.MaxShared:
		return nil, fmt.Errorf("share media %s: %d bytes, over the shared store's %d-byte cap", path, st.Size(), media.MaxShared)
	}
	data, err := io.ReadAll(io.LimitReader(f, media.MaxShared+1))
	if err != nil {
		return nil, fmt.Errorf("share media %s: %w", path, err)
	}
	if len(data) > media.MaxShared {
		return nil, fmt.Errorf("share media %s: grew over the shared store's %d-byte cap while read", path, media.MaxShared)
	}
	return data, nil
}

// Local is ref when it is this host's own file (never shared, or the same
// bytes as the shared ones), else the copy under the store's dir, written
// from the database the first time.
func (m *Media) Local(ctx context.Context, ref string) (string, error) {
	if media.IsURL(ref) {
		return ref, nil
	}
	var size int64
	var sum []byte
	err := m.db.pool.QueryRow(ctx, `SELECT size, sha256 FROM media WHERE instance = $1 AND ref = $2`, m.instance, ref).Scan(&size, &sum)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if st, err := os.Stat(ref); err == nil && st.Mode().IsRegular() {
			return ref, nil // this host's own file (the workspace's), never shared
		}
		return "", fmt.Errorf("media %s: %w", ref, media.ErrNotFound)
	case err != nil:
		return "", fmt.Errorf("media %s from %s: %w", ref, m.db.where, err)
	}
	for i, p := range m.spots(ref, sum) {
		if sameFile(p, size, sum) {
			if i > 0 { // a fetched copy: its mtime says when it was last used, for gc's temp rule
				now := time.Now()
				_ = os.Chtimes(p, now, now)
			}
			return p, nil
		}
	}
	var data []byte
	if err := m.db.pool.QueryRow(ctx, `SELECT data, sha256 FROM media WHERE instance = $1 AND ref = $2`, m.instance, ref).Scan(&data, &sum); err != nil {
		return "", fmt.Errorf("media %s from %s: %w", ref, m.db.where, err)
	}
	if got := sha256.Sum256(data); !bytes.Equal(got[:], sum) {
		return "", fmt.Errorf("media %s from %s: the stored bytes do not match their sha256", ref, m.db.where)
	}
	spots := m.spots(ref, sum)
	dest := spots[1]
	if _, err := os.Lstat(dest); err == nil {
		dest = spots[2] // another file holds the name
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", fmt.Errorf("media %s: %w", ref, err)
	}
	if err := atomicfile.WriteUnsynced(dest, data, 0o600); err != nil {
		return "", fmt.Errorf("media %s: %w", ref, err)
	}
	return dest, nil
}

// spots are where this host may hold ref's bytes: ref itself when it is
// under own, its kept name under dir, and that name in a folder named by
// the content (when another file took the name first).
func (m *Media) spots(ref string, sum []byte) []string {
	name := media.KeptName(ref)
	mine := ""
	if rel, err := filepath.Rel(m.own, ref); m.own != "" && err == nil && filepath.IsLocal(rel) {
		mine = ref
	}
	return []string{mine, filepath.Join(m.dir, name), filepath.Join(m.dir, hex.EncodeToString(sum[:min(6, len(sum))]), name)}
}

// sameFile reports whether path is a regular file of size bytes hashing to sum.
func sameFile(path string, size int64, sum []byte) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() != size {
		return false
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return bytes.Equal(h.Sum(nil), sum)
}
