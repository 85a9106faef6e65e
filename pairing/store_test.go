package pairing

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCodesHaveNoLookAlikes(t *testing.T) {
	s := NewStore(t.TempDir())
	seen := map[string]bool{}
	for i := range 200 {
		code, fresh, err := s.Request("telegram", "u"+string(rune('a'+i%26))+strings.Repeat("x", i/26), "c")
		require.NoError(t, err)
		require.True(t, fresh)
		require.Len(t, code, CodeLength)
		require.Regexp(t, `^[A-Z2-9]{8}$`, code)
		require.NotContains(t, code, "0")
		require.NotContains(t, code, "O")
		require.NotContains(t, code, "1")
		require.NotContains(t, code, "I")
		require.NotContains(t, code, "L")
		seen[code] = true
	}
	require.Len(t, seen, 200)
}

func TestRequestApproveExpire(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := &Store{Path: filepath.Join(t.TempDir(), "pairing.json"), Now: func() time.Time { return now }}
	code, fresh, err := s.Request("telegram", "42|bob", "42")
	require.NoError(t, err)
	require.True(t, fresh)
	again, fresh, err := s.Request("telegram", "42|bob", "42")
	require.NoError(t, err)
	require.False(t, fresh, "one code per sender while it is valid")
	require.Equal(t, code, again)

	now = now.Add(CodeTTL + time.Second)
	_, err = s.Approve(code)
	require.ErrorIs(t, err, ErrUnknownCode, "a code is valid 600 s")
	code, fresh, err = s.Request("telegram", "42|bob", "42")
	require.NoError(t, err)
	require.True(t, fresh, "after expiry a new code is given")

	r, err := s.Approve(strings.ToLower(code))
	require.NoError(t, err)
	require.Equal(t, "42|bob", r.SenderID)
	for _, id := range []string{"42|bob", "42", "bob"} {
		ok, err := s.IsApproved("telegram", id)
		require.NoError(t, err)
		require.True(t, ok, id)
	}
	ok, err := s.IsApproved("slack", "42")
	require.NoError(t, err)
	require.False(t, ok, "approval is per channel")
	n, err := s.Revoke("bob")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	ok, err = s.IsApproved("telegram", "42")
	require.NoError(t, err)
	require.False(t, ok)
}

func TestDenyAndBrokenFile(t *testing.T) {
	s := NewStore(t.TempDir())
	code, _, err := s.Request("slack", "U1", "D1")
	require.NoError(t, err)
	_, err = s.Deny(code)
	require.NoError(t, err)
	pending, approved, err := s.List()
	require.NoError(t, err)
	require.Empty(t, pending)
	require.Empty(t, approved)

	require.NoError(t, os.WriteFile(s.Path, []byte("{not json"), 0o600))
	_, err = s.IsApproved("slack", "U1")
	require.ErrorContains(t, err, "pairing.json is not valid JSON")
}

func TestConcurrentRequestsKeepEveryCode(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := NewStore(dir).Request("telegram", "user"+string(rune('A'+i)), "c")
			require.NoError(t, err)
		}()
	}
	wg.Wait()
	pending, _, err := NewStore(dir).List()
	require.NoError(t, err)
	require.Len(t, pending, 20, "the file lock serializes writers")
}

func TestSameSender(t *testing.T) {
	require.True(t, SameSender("42|bob", "42"))
	require.True(t, SameSender("bob", "42|bob"))
	require.False(t, SameSender("42|bob", "43|alice"))
	require.False(t, SameSender("|", "|"+""), "empty parts never match")
}
