package teams

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// conversations remember the serviceUrl of each conversation that wrote
// to the bot: the connector takes its replies there. Kept in a file of the
// home, so a restarted gateway answers the turns in flight.
type conversations struct {
	file string
	log  *slog.Logger

	mu   sync.Mutex
	urls map[string]string
}

func loadConversations(file string, log *slog.Logger) *conversations {
	s := &conversations{file: file, log: log, urls: map[string]string{}}
	if file == "" {
		return s
	}
	data, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(data, &s.urls)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Warn("msteams conversations not read; replies wait for each conversation's next message", "file", file, "error", err)
	}
	if s.urls == nil {
		s.urls = map[string]string{}
	}
	return s
}

// remember records where a conversation is served; the file is written
// when that changed.
func (s *conversations) remember(id, serviceURL string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.urls[id] == serviceURL {
		return
	}
	s.urls[id] = serviceURL
	if s.file == "" {
		return
	}
	data, err := json.Marshal(s.urls)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(s.file), 0o700)
	}
	if err == nil {
		err = atomicfile.Write(s.file, data, 0o600)
	}
	if err != nil {
		s.log.Warn("msteams conversation not saved: a restart forgets where to answer it", "conversation", id, "error", err)
	}
}

func (s *conversations) serviceURL(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.urls[id]
}
