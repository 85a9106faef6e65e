package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/owner"
)

// OwnerKey runs the owner key store's contract: the first key proposed is
// the instance's for good, whichever instance (host, process) asks.
func OwnerKey(t *testing.T, fresh Fresh[owner.Store]) {
	run(t, fresh, []test[owner.Store]{
		{"TheFirstProposalIsKept", ownerFirstKept},
		{"ConcurrentProposalsAgreeOnOne", ownerConcurrent},
		{"NothingProposedNothingStored", ownerNothing},
	})
}

func newKey(t *testing.T) owner.Key {
	k, err := owner.NewKey()
	require.NoError(t, err)
	return k
}

func ownerFirstKept(t *testing.T, open Open[owner.Store]) {
	ctx := context.Background()
	first, second := newKey(t), newKey(t)
	got, err := open(t).Adopt(ctx, first)
	require.NoError(t, err)
	require.True(t, got.Equal(first))
	got, err = open(t).Adopt(ctx, second)
	require.NoError(t, err)
	require.True(t, got.Equal(first), "another host's proposal adopts the stored key")
	got, err = open(t).Adopt(ctx, owner.Key{})
	require.NoError(t, err)
	require.True(t, got.Equal(first), "a read without a proposal")
}

func ownerConcurrent(t *testing.T, open Open[owner.Store]) {
	ctx := context.Background()
	keys := make([]owner.Key, 8)
	var wg sync.WaitGroup
	for i := range keys {
		store, proposed := open(t), newKey(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := store.Adopt(ctx, proposed)
			require.NoError(t, err)
			keys[i] = got
		}()
	}
	wg.Wait()
	for _, k := range keys[1:] {
		require.True(t, k.Equal(keys[0]), "hosts starting at once end with one key")
	}
}

func ownerNothing(t *testing.T, open Open[owner.Store]) {
	_, err := open(t).Adopt(context.Background(), owner.Key{})
	require.ErrorIs(t, err, owner.ErrNotStored, "no key stored, none proposed")
	k := newKey(t)
	got, err := open(t).Adopt(context.Background(), k)
	require.NoError(t, err)
	require.True(t, got.Equal(k))
}
