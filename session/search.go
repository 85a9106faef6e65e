package session

import (
	"context"
	"fmt"
	"strings"
)

var _ Searcher = (*JSONLStore)(nil)

// Search reads the chat sessions newest first until limit of them match:
// the files have no index, so a search costs one read per session.
func (s *JSONLStore) Search(query, exclude string, limit int) ([]Match, error) {
	needle := strings.ToLower(query)
	infos, err := s.SessionsOfKind("")
	if err != nil {
		return nil, err
	}
	NewestFirst(infos)
	var out []Match
	for _, info := range infos {
		if len(out) >= limit {
			break
		}
		if info.Key == exclude {
			continue
		}
		sess, err := s.Load(context.Background(), info.Key)
		if err != nil {
			return nil, fmt.Errorf("search session %s: %w", info.Key, err)
		}
		if m, ok := matchIn(sess, needle, info.Modified); ok {
			out = append(out, m)
		}
	}
	return out, nil
}
