package skills

import "testing"

// BenchmarkList is one listing of the skills as every turn's system prompt does it.
func BenchmarkList(b *testing.B) {
	l := Loader{Workspace: b.TempDir()}
	for b.Loop() {
		if _, err := l.List(); err != nil {
			b.Fatal(err)
		}
	}
}
