package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
)

// ChannelState runs the channel state store's contract. open opens the
// state of the channel named by its second argument ("matrix", "weixin");
// shared backends (a database) also show one gateway what another put.
func ChannelState(t *testing.T, fresh Fresh[func(channel string) channels.StateStore], shared bool) {
	tests := []test[func(string) channels.StateStore]{
		{"PutThenGet", stateGetPut},
		{"KeptAcrossARestart", stateRestart},
		{"ChannelsAreApart", stateApart},
	}
	if shared {
		tests = append(tests, test[func(string) channels.StateStore]{"LastWriterWinsAcrossGateways", stateShared})
	}
	run(t, fresh, tests)
}

func stateGetPut(t *testing.T, open Open[func(string) channels.StateStore]) {
	s := open(t)("matrix")
	v, err := s.Get("next_batch:@bot:hs")
	require.NoError(t, err)
	require.Empty(t, v, "nothing put yet")
	require.NoError(t, s.Put("next_batch:@bot:hs", "s1_2"))
	require.NoError(t, s.Put("next_batch:@other:hs", "s9"))
	require.NoError(t, s.Put("next_batch:@bot:hs", "s3_4"))
	v, err = s.Get("next_batch:@bot:hs")
	require.NoError(t, err)
	require.Equal(t, "s3_4", v, "a put replaces the value")
	v, err = s.Get("next_batch:@other:hs")
	require.NoError(t, err)
	require.Equal(t, "s9", v, "each key its own")
}

func stateRestart(t *testing.T, open Open[func(string) channels.StateStore]) {
	require.NoError(t, open(t)("weixin").Put("context:u1", "ctx-a"))
	v, err := open(t)("weixin").Get("context:u1")
	require.NoError(t, err)
	require.Equal(t, "ctx-a", v, "a restart reads what was put before")
}

func stateApart(t *testing.T, open Open[func(string) channels.StateStore]) {
	stores := open(t)
	require.NoError(t, stores("matrix").Put("k", "from matrix"))
	require.NoError(t, stores("weixin").Put("k", "from weixin"))
	v, err := stores("matrix").Get("k")
	require.NoError(t, err)
	require.Equal(t, "from matrix", v)
}

func stateShared(t *testing.T, open Open[func(string) channels.StateStore]) {
	a, b := open(t)("matrix"), open(t)("matrix")
	require.NoError(t, a.Put("next_batch:@bot:hs", "s1"))
	v, err := b.Get("next_batch:@bot:hs")
	require.NoError(t, err)
	require.Equal(t, "s1", v, "another gateway reads what one put")
	require.NoError(t, b.Put("next_batch:@bot:hs", "s2"))
	v, err = a.Get("next_batch:@bot:hs")
	require.NoError(t, err)
	require.Equal(t, "s2", v, "the last writer wins")
}
