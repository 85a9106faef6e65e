// Package media makes the files a message carries readable on every host.
// A channel saves a download on its gateway and names it by its path (the
// ref); the turn reads it on the workspace host or a model worker, and a
// reply's file goes the other way. On one host (the files) the path is
// already everywhere; with PostgreSQL the bytes go through the database.
package media

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MaxShared bounds a file the shared store takes: the largest download
// limit of any channel (QQ's and WeCom's 200 MB).
const MaxShared = 200 << 20

// ErrNotFound marks a ref this host lacks and the shared store does not hold.
var ErrNotFound = errors.New("no such media file on this host or in the shared store")

// Store makes a host's files readable by every host under their paths.
type Store interface {
	// Share makes the local file at path readable by every host under path, its ref.
	Share(ctx context.Context, path string) error
	// Local is a readable path on this host for ref, fetched from the shared
	// store when this host lacks it. A URL is returned as it is.
	Local(ctx context.Context, ref string) (string, error)
}

// Files is the store of one host: every ref is already a local path.
type Files struct{}

var _ Store = Files{}

// Share has nothing to do: every process reads the same disk.
func (Files) Share(context.Context, string) error { return nil }

// Local is ref when it exists; any other ref is not found, so a reader
// reports it as it always did.
func (Files) Local(_ context.Context, ref string) (string, error) {
	if IsURL(ref) {
		return ref, nil
	}
	if _, err := os.Stat(ref); err != nil {
		return "", fmt.Errorf("media %s: %w (%v)", ref, ErrNotFound, err)
	}
	return ref, nil
}

// IsURL reports whether ref is an http(s) URL, which every host reaches itself.
func IsURL(ref string) bool {
	lower := strings.ToLower(ref)
	return strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")
}

// ShareAll shares each local file of refs (URLs are skipped); the error
// joins every file that could not be shared.
func ShareAll(ctx context.Context, s Store, refs []string) error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, ref := range refs {
		if IsURL(ref) {
			continue
		}
		if err := s.Share(ctx, ref); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// LocalAll maps refs to paths readable here. A ref nobody has is kept as
// it is, so the reader reports it missing as it did before; any other
// failure (the database) is returned, for the activity to retry.
func LocalAll(ctx context.Context, s Store, refs []string) ([]string, error) {
	if s == nil || len(refs) == 0 {
		return refs, nil
	}
	out := make([]string, len(refs))
	for i, ref := range refs {
		p, err := s.Local(ctx, ref)
		switch {
		case errors.Is(err, ErrNotFound):
			out[i] = ref
		case err != nil:
			return nil, err
		default:
			out[i] = p
		}
	}
	return out, nil
}

// Dir is where a host writes the files it fetches: the workspace's media/
// on the host holding the workspace (so the model's file tools find them
// where a channel would have saved them), else a cache outside the home,
// since a stateless host's home keeps no state.
func Dir(workspace string) string {
	if workspace != "" {
		return filepath.Join(workspace, "media")
	}
	return filepath.Join(os.TempDir(), "nanobot-media-"+strconv.Itoa(os.Getuid()))
}

// KeptName is the part of ref a fetched copy keeps: what follows its last
// media/ folder (the name a channel gave it), else its base name.
func KeptName(ref string) string {
	slashed := filepath.ToSlash(ref)
	if i := strings.LastIndex(slashed, "/media/"); i >= 0 {
		if rest := filepath.FromSlash(slashed[i+len("/media/"):]); filepath.IsLocal(rest) {
			return rest
		}
	}
	if base := filepath.Base(ref); base != "." && base != string(filepath.Separator) && base != ".." {
		return base
	}
	return "file"
}
