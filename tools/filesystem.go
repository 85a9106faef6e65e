package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// RegisterFilesystem adds read_file, write_file, edit_file and list_dir.
func RegisterFilesystem(r *Registry) {
	r.Register(readFile{})
	r.Register(writeFile{})
	r.Register(editFile{})
	r.Register(listDir{})
}

// binarySniffLen is how much of a file is inspected to call it binary.
const binarySniffLen = 8 << 10

// looksBinary reports NUL bytes or invalid UTF-8 in the first 8 KiB; a rune
// cut by the 8 KiB boundary does not count as invalid.
func looksBinary(data []byte) bool {
	head := data[:min(len(data), binarySniffLen)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if utf8.Valid(head) {
		return false
	}
	if len(data) > binarySniffLen {
		for cut := 1; cut < utf8.UTFMax && cut <= len(head); cut++ {
			if utf8.Valid(head[:len(head)-cut]) && !utf8.FullRune(head[len(head)-cut:]) {
				return false
			}
		}
	}
	return true
}

// resolveForTool resolves p for a tool and phrases failures for the model.
func resolveForTool(env Env, p string) (string, *Result) {
	resolved, err := ResolvePath(env, p)
	if err != nil {
		res := ErrorResult("Error: %v", err)
		return "", &res
	}
	return resolved, nil
}

// statForTool resolves p and stats it, phrasing failures for the model:
// notFound names what is missing ("File", "Path", "Directory") and doing
// says what failed ("reading file").
func statForTool(env Env, p, notFound, doing string) (string, fs.FileInfo, *Result) {
	resolved, errRes := resolveForTool(env, p)
	if errRes != nil {
		return "", nil, errRes
	}
	fi, err := os.Stat(resolved)
	if errors.Is(err, fs.ErrNotExist) {
		res := ErrorResult("Error: %s not found: %s", notFound, p)
		return "", nil, &res
	}
	if err != nil {
		res := ErrorResult("Error %s: %v", doing, err)
		return "", nil, &res
	}
	return resolved, fi, nil
}

// atomicWrite replaces path with data via a temp file in the same directory
// and a rename, so readers never see a half-written file. An existing
// file's permissions are kept.
func atomicWrite(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create parent directories: %w", err)
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return atomicfile.Write(path, data, mode)
}

// numberLine renders one line the way read_file documents it: the 1-based
// line number right-aligned in 6 columns, a tab, then the text (cat -n).
func numberLine(n int, text string) string { return fmt.Sprintf("%6d\t%s", n, text) }
