package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/pairing"
)

// Pairing runs the pairing store's contract (its rules over each backend).
func Pairing(t *testing.T, fresh Fresh[*pairing.Store]) {
	run(t, fresh, []test[*pairing.Store]{
		{"OneCodePerSenderAcrossInstances", pairingOneCode},
		{"ApproveDenyRevoke", pairingApprove},
		{"CodesExpire", pairingExpiry},
		{"ConcurrentRequestsKeepEveryCode", pairingConcurrent},
	})
}

func pairingOneCode(t *testing.T, open Open[*pairing.Store]) {
	code, fresh, err := open(t).Request("telegram", "42|bob", "c42")
	require.NoError(t, err)
	require.True(t, fresh)
	require.Len(t, code, pairing.CodeLength)
	again, fresh, err := open(t).Request("telegram", "42|bob", "c42")
	require.NoError(t, err)
	require.False(t, fresh, "an unexpired code is not given twice, whichever host asks")
	require.Equal(t, code, again)
	pending, approved, err := open(t).List()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Empty(t, approved)
	require.Equal(t, pairing.Request{Code: code, Channel: "telegram", SenderID: "42|bob", ChatID: "c42",
		Created: pending[0].Created, Expires: pending[0].Created.Add(pairing.CodeTTL)}, pending[0])
}

func pairingApprove(t *testing.T, open Open[*pairing.Store]) {
	s := open(t)
	code, _, err := s.Request("telegram", "42|bob", "c42")
	require.NoError(t, err)
	other, _, err := s.Request("slack", "U1", "D1")
	require.NoError(t, err)
	req, err := open(t).Approve(" " + code + " ")
	require.NoError(t, err, "codes are trimmed")
	require.Equal(t, "42|bob", req.SenderID)
	_, err = s.Approve(code)
	require.ErrorIs(t, err, pairing.ErrUnknownCode, "a code is used once")
	for _, id := range []string{"42", "bob", "42|bob"} {
		ok, err := open(t).IsApproved("telegram", id)
		require.NoError(t, err)
		require.True(t, ok, id)
	}
	ok, err := s.IsApproved("discord", "42")
	require.NoError(t, err)
	require.False(t, ok, "approval is per channel")

	_, err = s.Deny(other)
	require.NoError(t, err)
	ok, err = s.IsApproved("slack", "U1")
	require.NoError(t, err)
	require.False(t, ok, "a denied code lets no one in")
	pending, approved, err := s.List()
	require.NoError(t, err)
	require.Empty(t, pending)
	require.Len(t, approved, 1)

	n, err := open(t).Revoke("telegram:42|bob")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	ok, err = s.IsApproved("telegram", "42")
	require.NoError(t, err)
	require.False(t, ok)
	n, err = s.Revoke("nobody")
	require.NoError(t, err)
	require.Zero(t, n)
}

func pairingExpiry(t *testing.T, open Open[*pairing.Store]) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	s := open(t)
	s.Now = func() time.Time { return now }
	code, _, err := s.Request("telegram", "7", "c7")
	require.NoError(t, err)
	now = now.Add(pairing.CodeTTL + time.Second)
	pending, _, err := s.List()
	require.NoError(t, err)
	require.Empty(t, pending, "an expired code is not listed")
	_, err = s.Approve(code)
	require.ErrorIs(t, err, pairing.ErrUnknownCode)
	next, fresh, err := s.Request("telegram", "7", "c7")
	require.NoError(t, err)
	require.True(t, fresh, "after expiry a new code is given")
	require.NotEqual(t, code, next)
}

func pairingConcurrent(t *testing.T, open Open[*pairing.Store]) {
	stores := []*pairing.Store{open(t), open(t)}
	var wg sync.WaitGroup
	var fresh atomic.Int64
	codes := make([]string, 20)
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, _, err := stores[i%2].Request("telegram", fmt.Sprint("user", i), "c"); err != nil {
				t.Error(err)
			}
		}()
		go func() { // everyone also asks for the one same sender
			defer wg.Done()
			code, isNew, err := stores[i%2].Request("telegram", "same", "c")
			if err != nil {
				t.Error(err)
			}
			codes[i] = code
			if isNew {
				fresh.Add(1)
			}
		}()
	}
	wg.Wait()
	pending, _, err := stores[0].List()
	require.NoError(t, err)
	require.Len(t, pending, 21, "writers are serialized: no code lost")
	require.EqualValues(t, 1, fresh.Load(), "one sender gets one code")
	for _, c := range codes {
		require.Equal(t, codes[0], c)
	}
}
