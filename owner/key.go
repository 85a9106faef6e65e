// Package owner holds the instance's owner key and the proofs made with it:
// a seal on every message a channel admitted or the owner's CLI sent, and a
// proof on every approval answer, so that only a person's answer runs a
// call that waits for one. The key lives under the home (owner.key, 0600),
// a folder the sandbox hides, and, with PostgreSQL, in the database too.
package owner

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/nanobot-durable/nanobot/secrets"
)

// FileName is the key's file under the home.
const FileName = "owner.key"

// keyBytes is the key's length: 32 random bytes, kept as 64 hex digits.
const keyBytes = 32

// Key is an owner key. It prints as a placeholder, never as its bytes.
type Key struct{ b []byte }

// NewKey is a fresh random key.
func NewKey() (Key, error) {
	b := make([]byte, keyBytes)
	if _, err := rand.Read(b); err != nil {
		return Key{}, fmt.Errorf("owner key: %w", err)
	}
	return Key{b: b}, nil
}

// ParseKey reads a key from its hex form.
func ParseKey(s string) (Key, error) {
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != keyBytes {
		return Key{}, errors.New("owner key: not 64 hex digits")
	}
	return Key{b: b}, nil
}

// Valid reports whether the key is set.
func (k Key) Valid() bool { return len(k.b) == keyBytes }

// Hex is the stored form; only stores write it.
func (k Key) Hex() string { return hex.EncodeToString(k.b) }

// Equal compares in constant time.
func (k Key) Equal(o Key) bool { return k.Valid() && hmac.Equal(k.b, o.b) }

// String keeps the key out of any text a %v makes.
func (k Key) String() string { return "[owner key]" }

// GoString keeps the key out of %#v too.
func (k Key) GoString() string { return k.String() }

// LogValue keeps the key out of log lines.
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// derive is a key for one purpose, so a proof made for one thing never
// passes for another.
func (k Key) derive(purpose string) []byte {
	m := hmac.New(sha256.New, k.b)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// Store keeps an instance's owner key: a file under the home, a database row.
type Store interface {
	// Adopt returns the stored key; when there is none yet it stores
	// proposed first (insert-if-absent: of two hosts starting at once, one
	// key wins), or, proposing the zero key, fails with ErrNotStored.
	Adopt(ctx context.Context, proposed Key) (Key, error)
}

// ErrNotStored: the store holds no key and none was proposed.
var ErrNotStored = errors.New("no owner key stored")

// File is the key in a file, 0600.
type File struct{ Path string }

// FileIn is the key file of a home.
func FileIn(home string) File { return File{Path: filepath.Join(home, FileName)} }

// Adopt reads the file, writing proposed first when it is missing.
func (f File) Adopt(_ context.Context, proposed Key) (Key, error) {
	k, err := f.read()
	if !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if !proposed.Valid() {
		return Key{}, fmt.Errorf("%s: %w", f.Path, ErrNotStored)
	}
	if err := f.create(proposed); err != nil {
		return Key{}, err
	}
	return f.read()
}

func (f File) read() (Key, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return Key{}, fmt.Errorf("read %s: %w", f.Path, err)
	}
	k, err := ParseKey(string(data))
	if err != nil {
		return Key{}, fmt.Errorf("%s: %w", f.Path, err)
	}
	return k, nil
}

// create writes the key whole and links it into place, so a reader never
// sees half a key and a second writer's link fails instead of replacing it.
func (f File) create(k Key) error {
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("owner key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".owner-key-*")
	if err != nil {
		return fmt.Errorf("owner key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(k.Hex() + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write owner key: %w", werr)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return fmt.Errorf("owner key: %w", err)
	}
	if err := os.Link(tmp.Name(), f.Path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("write %s: %w", f.Path, err)
	}
	return nil
}

// Resolve is the process's owner key: the home's file (made when missing),
// or, with a shared store (the database), the instance's key there, which
// the first host's file key becomes; a host that finds it there writes no
// file (a stateless worker keeps no state). Every key read is masked from here on.
func Resolve(ctx context.Context, file, shared Store) (Key, error) {
	if shared != nil {
		k, err := shared.Adopt(ctx, Key{})
		if err == nil {
			secrets.Register(k.Hex())
			return k, nil
		}
		if !errors.Is(err, ErrNotStored) {
			return Key{}, fmt.Errorf("owner key on the database: %w", err)
		}
	}
	proposed, err := NewKey()
	if err != nil {
		return Key{}, err
	}
	if shared == nil {
		k, err := file.Adopt(ctx, proposed)
		if err != nil {
			return Key{}, err
		}
		secrets.Register(k.Hex())
		return k, nil
	}
	// The database has none yet: it takes this home's file key when there is
	// one, else a new key, and no file is written (a stateless host may be first).
	if k, err := file.Adopt(ctx, Key{}); err == nil {
		proposed = k
	} else if !errors.Is(err, ErrNotStored) {
		return Key{}, err
	}
	secrets.Register(proposed.Hex())
	k, err := shared.Adopt(ctx, proposed)
	if err != nil {
		return Key{}, fmt.Errorf("owner key on the database: %w", err)
	}
	secrets.Register(k.Hex())
	return k, nil
}
