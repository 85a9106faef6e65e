package devicestore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The decrypted-event buffer: put/get/clear, old handled hashes
// forgotten, and the decryption transaction all or nothing.
func TestEventBuffer(t *testing.T) {
	ctx := context.Background()
	hash := [32]byte{1, 2, 3}
	runCases(t, []storeCase{
		{"put, get, clear", func(t *testing.T, c *Container) {
			evt, err := c.GetBufferedEvent(ctx, hash)
			require.NoError(t, err)
			require.Nil(t, evt)
			server := time.UnixMilli(1700000000123)
			require.NoError(t, c.PutBufferedEvent(ctx, hash, []byte("plain"), server))
			evt, err = c.GetBufferedEvent(ctx, hash)
			require.NoError(t, err)
			require.Equal(t, []byte("plain"), evt.Plaintext)
			require.True(t, server.Equal(evt.ServerTime))
			require.WithinDuration(t, time.Now(), evt.InsertTime, time.Minute)
			require.NoError(t, c.ClearBufferedEventPlaintext(ctx, hash))
			evt, err = c.GetBufferedEvent(ctx, hash)
			require.NoError(t, err)
			require.NotNil(t, evt, "the hash stays, to spot a redelivery")
			require.Nil(t, evt.Plaintext)
		}},
		{"old handled hashes forgotten, pending ones kept", func(t *testing.T, c *Container) {
			old, pending, recent := [32]byte{1}, [32]byte{2}, [32]byte{3}
			for _, h := range [][32]byte{old, pending, recent} {
				require.NoError(t, c.PutBufferedEvent(ctx, h, []byte("p"), time.Now()))
			}
			require.NoError(t, c.ClearBufferedEventPlaintext(ctx, old))
			require.NoError(t, c.ClearBufferedEventPlaintext(ctx, recent))
			past := time.Now().Add(-bufferKeep - time.Hour).UnixMilli()
			_, err := c.db.Exec(`UPDATE event_buffer SET insert_time = ? WHERE ciphertext_hash IN (?, ?)`, past, old[:], pending[:])
			require.NoError(t, err)
			require.NoError(t, c.DeleteOldBufferedHashes(ctx))
			for h, kept := range map[[32]byte]bool{old: false, pending: true, recent: true} {
				evt, err := c.GetBufferedEvent(ctx, h)
				require.NoError(t, err)
				require.Equal(t, kept, evt != nil, "%x", h[:1])
			}
		}},
		{"decryption transaction: stores inside join it, a failure undoes all", func(t *testing.T, c *Container) {
			boom := errors.New("decrypt failed")
			err := c.DoDecryptionTxn(ctx, func(ctx context.Context) error {
				require.NoError(t, c.PutSession(ctx, "15550002:0", []byte("ratchet")))
				require.NoError(t, c.PutBufferedEvent(ctx, hash, []byte("plain"), time.Now()))
				return boom
			})
			require.ErrorIs(t, err, boom)
			has, err := c.HasSession(ctx, "15550002:0")
			require.NoError(t, err)
			require.False(t, has, "rolled back")
			require.NoError(t, c.DoDecryptionTxn(ctx, func(ctx context.Context) error {
				if err := c.PutSession(ctx, "15550002:0", []byte("ratchet")); err != nil {
					return err
				}
				return c.PutBufferedEvent(ctx, hash, []byte("plain"), time.Now())
			}))
			evt, err := c.GetBufferedEvent(ctx, hash)
			require.NoError(t, err)
			require.Equal(t, []byte("plain"), evt.Plaintext)
			has, err = c.HasSession(ctx, "15550002:0")
			require.NoError(t, err)
			require.True(t, has, "committed together")
		}},
	})
}

// Decryption transactions and plain calls from many goroutines at once
// neither deadlock on the one connection nor lose a write.
func TestDecryptionTxnConcurrent(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	const n = 16
	errs := make(chan error, 2*n)
	for i := range n {
		addr := fmt.Sprintf("1555%04d:0", i)
		go func() {
			errs <- c.DoDecryptionTxn(ctx, func(ctx context.Context) error {
				if _, err := c.GetSession(ctx, addr); err != nil {
					return err
				}
				if err := c.PutSession(ctx, addr, []byte(addr)); err != nil {
					return err
				}
				return c.PutBufferedEvent(ctx, [32]byte{byte(i)}, []byte(addr), time.Now())
			})
		}()
		go func() {
			_, err := c.GetManySessions(ctx, []string{addr})
			errs <- err
		}()
	}
	for range 2 * n {
		select {
		case err := <-errs:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("store calls stuck")
		}
	}
	for i := range n {
		addr := fmt.Sprintf("1555%04d:0", i)
		got, err := c.GetSession(ctx, addr)
		require.NoError(t, err)
		require.Equal(t, []byte(addr), got)
	}
}
