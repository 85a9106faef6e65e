// Package gitstore versions the agent's memory files with git (go-git: no
// git binary needed): SOUL.md, USER.md, memory/MEMORY.md, the Dream cursor
// and the workspace skills. The repository lives in .nanobot/memory.git
// and never touches a git repository the user keeps in the workspace.
package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// Tracked files (slash paths relative to the workspace); "skills/" means the whole folder.
var Tracked = []string{"SOUL.md", "USER.md", "memory/MEMORY.md", "memory/.dream_cursor", "skills/"}

const branch = plumbing.ReferenceName("refs/heads/main")

// Store is the memory repository of one workspace.
type Store struct {
	workspace string
	repo      *git.Repository
}

// Dir is where the repository lives.
func Dir(workspace string) string { return filepath.Join(workspace, ".nanobot", "memory.git") }

// Open opens the repository, creating it on first use.
func Open(workspace string) (*Store, error) {
	dir := Dir(workspace)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	repo, err := git.Open(st, nil)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		repo, err = git.Init(st, nil)
		if err == nil {
			err = st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, branch))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open memory repository %s: %w", dir, err)
	}
	return &Store{workspace: workspace, repo: repo}, nil
}

// Commit records the tracked files as they are now. It returns the new
// commit's hash, or "" when nothing changed since the last commit.
func (s *Store) Commit(message string, when time.Time) (string, []string, error) {
	files, err := s.readTracked()
	if err != nil {
		return "", nil, err
	}
	tree, err := s.writeTree(files)
	if err != nil {
		return "", nil, err
	}
	var parents []plumbing.Hash
	var before map[string][]byte
	if head, err := s.head(); err == nil {
		if head.TreeHash == tree {
			return "", nil, nil
		}
		parents = []plumbing.Hash{head.Hash}
		if before, err = s.filesAt(head); err != nil {
			return "", nil, err
		}
	} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", nil, err
	}
	sig := object.Signature{Name: "nanobot", Email: "dream@nanobot.local", When: when}
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree, ParentHashes: parents}
	obj := s.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return "", nil, err
	}
	hash, err := s.repo.Storer.SetEncodedObject(obj)
	if err != nil {
		return "", nil, fmt.Errorf("store commit: %w", err)
	}
	if err := s.repo.Storer.SetReference(plumbing.NewHashReference(branch, hash)); err != nil {
		return "", nil, fmt.Errorf("move %s: %w", branch, err)
	}
	return hash.String(), changed(before, files), nil
}

func changed(before, after map[string][]byte) []string {
	var out []string
	for p, data := range after {
		if old, ok := before[p]; !ok || string(old) != string(data) {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// readTracked reads the tracked files that exist.
func (s *Store) readTracked() (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, t := range Tracked {
		if dir, ok := strings.CutSuffix(t, "/"); ok {
			root := filepath.Join(s.workspace, filepath.FromSlash(dir))
			err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				if err != nil || d.IsDir() || !d.Type().IsRegular() {
					return err
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(s.workspace, p)
				files[filepath.ToSlash(rel)] = data
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", dir, err)
			}
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.workspace, filepath.FromSlash(t)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", t, err)
		}
		files[t] = data
	}
	return files, nil
}

// writeTree stores the files as blobs and nested trees, returning the root tree.
func (s *Store) writeTree(files map[string][]byte) (plumbing.Hash, error) {
	type node struct {
		files map[string]plumbing.Hash
		dirs  map[string]*node
	}
	newNode := func() *node { return &node{files: map[string]plumbing.Hash{}, dirs: map[string]*node{}} }
	root := newNode()
	for p, data := range files {
		blob := s.repo.Storer.NewEncodedObject()
		blob.SetType(plumbing.BlobObject)
		w, err := blob.Writer()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := w.Write(data); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := w.Close(); err != nil {
			return plumbing.ZeroHash, err
		}
		h, err := s.repo.Storer.SetEncodedObject(blob)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("store %s: %w", p, err)
		}
		n := root
		parts := strings.Split(p, "/")
		for _, dir := range parts[:len(parts)-1] {
			if n.dirs[dir] == nil {
				n.dirs[dir] = newNode()
			}
			n = n.dirs[dir]
		}
		n.files[parts[len(parts)-1]] = h
	}
	var write func(n *node) (plumbing.Hash, error)
	write = func(n *node) (plumbing.Hash, error) {
		var t object.Tree
		for name, h := range n.files {
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
		}
		for name, d := range n.dirs {
			h, err := write(d)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		// git orders entries by name, a folder's name compared as if it ended in "/".
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
		obj := s.repo.Storer.NewEncodedObject()
		if err := t.Encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		return s.repo.Storer.SetEncodedObject(obj)
	}
	return write(root)
}

func (s *Store) head() (*object.Commit, error) {
	ref, err := s.repo.Storer.Reference(branch)
	if err != nil {
		return nil, err
	}
	return s.repo.CommitObject(ref.Hash())
}

// filesAt reads every file of a commit.
func (s *Store) filesAt(c *object.Commit) (map[string][]byte, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err = tree.Files().ForEach(func(f *object.File) error {
		r, err := f.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		out[f.Name] = data
		return err
	})
	return out, err
}

// Entry is one commit of the memory log.
type Entry struct {
	Hash    string
	When    time.Time
	Message string
}

// Short is the abbreviated hash.
func (e Entry) Short() string { return e.Hash[:min(7, len(e.Hash))] }

// Log returns the newest n commits, newest first.
func (s *Store) Log(n int) ([]Entry, error) {
	head, err := s.head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for c := head; c != nil && len(out) < n; {
		out = append(out, Entry{Hash: c.Hash.String(), When: c.Author.When, Message: strings.TrimSpace(c.Message)})
		if c.NumParents() == 0 {
			break
		}
		if c, err = c.Parent(0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// resolve finds a commit by full or abbreviated hash.
func (s *Store) resolve(rev string) (*object.Commit, error) {
	rev = strings.ToLower(strings.TrimSpace(rev))
	if len(rev) < 4 {
		return nil, fmt.Errorf("commit %q: give at least 4 hex digits", rev)
	}
	entries, err := s.Log(1 << 20)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Hash, rev) {
			return s.repo.CommitObject(plumbing.NewHash(e.Hash))
		}
	}
	return nil, fmt.Errorf("no memory commit %s", rev)
}

// DreamPrefix marks Dream's own commits (nanobot's _DREAM_COMMIT_PREFIX).
const DreamPrefix = "dream:"

// Dreams are Dream's own commits, newest first, at most n.
func (s *Store) Dreams(n int) ([]Entry, error) {
	all, err := s.Log(1 << 20)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, e := range all {
		if strings.HasPrefix(e.Message, DreamPrefix) && len(out) < n {
			out = append(out, e)
		}
	}
	return out, nil
}

// Show describes one commit: its message and its diff against its parent.
func (s *Store) Show(rev string) (string, error) {
	ch, err := s.Change(rev)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("commit %s\nDate: %s\n\n    %s\n\n%s", ch.Hash, ch.When.Format(time.RFC3339), ch.Message, ch.Diff), nil
}

// Change is one commit with what it changed.
type Change struct {
	Entry
	// Parent is the commit before ("" for the first).
	Parent string
	// Diff is the unified diff against the parent; Files the paths it touches.
	Diff  string
	Files []string
}

// Change reads one commit (full or abbreviated hash) and its diff.
func (s *Store) Change(rev string) (Change, error) {
	c, err := s.resolve(rev)
	if err != nil {
		return Change{}, err
	}
	ch := Change{Entry: Entry{Hash: c.Hash.String(), When: c.Author.When, Message: strings.TrimSpace(c.Message)}}
	var patch *object.Patch
	if c.NumParents() > 0 {
		from, err := c.Parent(0)
		if err != nil {
			return Change{}, err
		}
		ch.Parent = from.Hash.String()
		patch, err = from.Patch(c)
		if err != nil {
			return Change{}, fmt.Errorf("diff %s: %w", c.Hash, err)
		}
	} else {
		tree, err := c.Tree()
		if err == nil {
			patch, err = (&object.Tree{}).Patch(tree)
		}
		if err != nil {
			return Change{}, fmt.Errorf("diff %s: %w", c.Hash, err)
		}
	}
	ch.Diff = patch.String()
	for _, fp := range patch.FilePatches() {
		from, to := fp.Files()
		if to != nil {
			ch.Files = append(ch.Files, to.Path())
		} else if from != nil {
			ch.Files = append(ch.Files, from.Path())
		}
	}
	return ch, nil
}

// Restore brings the tracked files back to how they were at rev (files
// added since are removed) and commits that, so the log shows the restore.
func (s *Store) Restore(rev string, when time.Time) (string, []string, error) {
	c, err := s.resolve(rev)
	if err != nil {
		return "", nil, err
	}
	want, err := s.filesAt(c)
	if err != nil {
		return "", nil, err
	}
	now, err := s.readTracked()
	if err != nil {
		return "", nil, err
	}
	for p := range now {
		if _, ok := want[p]; !ok && p != "memory/.dream_cursor" {
			if err := os.Remove(filepath.Join(s.workspace, filepath.FromSlash(p))); err != nil {
				return "", nil, fmt.Errorf("remove %s: %w", p, err)
			}
		}
	}
	for p, data := range want {
		if p == "memory/.dream_cursor" {
			continue // history Dream absorbed stays absorbed
		}
		full := filepath.Join(s.workspace, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", nil, err
		}
		if err := atomicfile.Write(full, data, 0o644); err != nil {
			return "", nil, err
		}
	}
	hash, files, err := s.Commit("dream-restore: back to "+path.Base(c.Hash.String())[:7], when)
	return hash, files, err
}
