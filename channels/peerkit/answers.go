package peerkit

import (
	"io"
	"net/http"
	"strings"
	"sync"
)

// Failure is an answer a fake gives once instead of the real one.
type Failure struct {
	Method string // "": any method
	Path   string // the request's path starts with it
	Status int
	Body   string // JSON
	Header http.Header
}

// Failures are the failures a test queued, each given once, the first
// queued first.
type Failures struct {
	mu   sync.Mutex
	list []Failure
}

// Add queues f.
func (fs *Failures) Add(f Failure) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.list = append(fs.list, f)
}

// Take takes the first failure queued for method and path off the queue.
func (fs *Failures) Take(method, path string) (Failure, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, f := range fs.list {
		if (f.Method == "" || f.Method == method) && strings.HasPrefix(path, f.Path) {
			fs.list = append(fs.list[:i], fs.list[i+1:]...)
			return f, true
		}
	}
	return Failure{}, false
}

// Write gives f as the answer.
func (f Failure) Write(w http.ResponseWriter) {
	for k, v := range f.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.Status)
	_, _ = io.WriteString(w, f.Body)
}

// Files are the files a fake serves, by path, each with its headers; any
// other path is a 404.
type Files struct {
	mu     sync.Mutex
	byPath map[string]servedFile
}

type servedFile struct {
	data   []byte
	header http.Header
}

// Add serves data at path with header (nil: none).
func (fs *Files) Add(path string, data []byte, header http.Header) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.byPath == nil {
		fs.byPath = map[string]servedFile{}
	}
	fs.byPath[path] = servedFile{data, header}
}

func (fs *Files) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fs.mu.Lock()
	f, ok := fs.byPath[r.URL.Path]
	fs.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	for k, v := range f.header {
		w.Header()[k] = v
	}
	_, _ = w.Write(f.data)
}
