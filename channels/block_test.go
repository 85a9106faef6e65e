package channels

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
)

// sampleBlock is a channel block with a key it needs and a URL it checks.
type sampleBlock struct {
	Enabled   bool     `json:"enabled"`
	Token     string   `json:"token"`
	APIBase   string   `json:"apiBase"`
	AllowFrom []string `json:"allowFrom"`
}

func (b sampleBlock) On() bool           { return b.Enabled }
func (b sampleBlock) Allowed() AllowFrom { return b.AllowFrom }
func (b sampleBlock) Lacking() []string  { return Blank("sample", "token", b.Token) }
func (b sampleBlock) Validate(where string) error {
	return CheckURL("sample", "apiBase", b.APIBase, where, "http", "https")
}

func sampleConfig(block string) *config.Config {
	cfg := config.Default()
	cfg.Path = "/home/u/.nanobot/config.json"
	cfg.Channels.Other = map[string]json.RawMessage{"sample": json.RawMessage(block)}
	return cfg
}

// BlockSpec reads every answer the registry asks from the typed block;
// what the channel set itself stays.
func TestBlockSpecReadsTheTypedBlock(t *testing.T) {
	s := BlockSpec(Spec{Name: "sample"}, func() sampleBlock { return sampleBlock{} })
	on := sampleConfig(`{"enabled":true,"token":" ","allow_from":["alice"]}`)
	require.True(t, s.Enabled(on))
	require.Equal(t, []string{"channels.sample.token"}, s.Missing(on))
	require.Equal(t, AllowFrom{"alice"}, s.AllowFrom(on))
	_, err := s.Check(on)
	require.NoError(t, err)

	bad := sampleConfig(`{"enabled":true,"token":"t","apiBase":"ftp://x"}`)
	require.Empty(t, s.Missing(bad))
	_, err = s.Check(bad)
	require.EqualError(t, err, `channels.sample.apiBase "ftp://x" is not a URL (http, https) (/home/u/.nanobot/config.json)`)
	broken := sampleConfig(`{"enabled":true,"token":5}`)
	require.False(t, s.Enabled(broken), "a block that does not read is not enabled")
	_, err = s.Check(broken)
	require.ErrorContains(t, err, "channels.sample.token")

	own := BlockSpec(Spec{Name: "sample", Missing: func(*config.Config) []string { return []string{"a login"} }},
		func() sampleBlock { return sampleBlock{} })
	require.Equal(t, []string{"a login"}, own.Missing(on))
}

func TestBlankAndCheckURL(t *testing.T) {
	require.Equal(t, []string{"channels.x.id", "channels.x.secret"}, Blank("x", "id", "", "secret", "\t", "name", "n"))
	require.Nil(t, Blank("x", "id", "1"))
	require.NoError(t, CheckURL("x", "u", "", ""))
	require.NoError(t, CheckURL("x", "u", "wss://h/p", "", "ws", "wss"))
	require.Error(t, CheckURL("x", "u", "wss:///nohost", "", "ws", "wss"))
	require.Error(t, CheckURL("x", "u", "not a url", "", "http"))
}

// TestCheckOneOfAndPortNameTheKey: the errors name the key, the value, the
// values allowed and the file.
func TestCheckOneOfAndPortNameTheKey(t *testing.T) {
	require.NoError(t, CheckOneOf("x", "mode", "b", " (c.json)", "a", "b"))
	require.EqualError(t, CheckOneOf("x", "mode", "z", " (c.json)", "a", "b"), `channels.x.mode "z" is not "a" or "b" (c.json)`)
	require.EqualError(t, CheckOneOf("x", "dm.policy", "", "", "a", "b", "c"), `channels.x.dm.policy "" is not "a", "b" or "c"`)
	require.NoError(t, CheckPort("x", "port", 0, true, ""))
	require.NoError(t, CheckPort("x", "port", 65535, false, ""))
	require.EqualError(t, CheckPort("x", "port", 0, false, " (c.json)"), "channels.x.port 0 is not a TCP port (c.json)")
	require.Error(t, CheckPort("x", "port", 65536, true, ""))
}

// TestCheckAtLeastNamesTheKey: a value at the bound passes, one below it
// names the key, the value, the bound and the file.
func TestCheckAtLeastNamesTheKey(t *testing.T) {
	require.NoError(t, CheckAtLeast("x", "size", 1, 1, ""))
	require.NoError(t, CheckAtLeast("x", "timeout", 0, 0, ""))
	require.EqualError(t, CheckAtLeast("x", "size", 0, 1, " (c.json)"), "channels.x.size 0 must be at least 1 (c.json)")
	require.Error(t, CheckAtLeast("x", "timeout", -1, 0, ""))
}

// TestStartBlockRefusesAHalfSetBlock: a constructor's read names the keys
// the channel cannot start without, and the file; a bad value is refused
// as ValidBlock refuses it; a whole block reads.
func TestStartBlockRefusesAHalfSetBlock(t *testing.T) {
	defaults := func() sampleBlock { return sampleBlock{} }
	_, err := StartBlock(sampleConfig(`{"enabled":true}`), "sample", defaults)
	require.EqualError(t, err, "channels.sample.token is not set (/home/u/.nanobot/config.json)")
	_, err = StartBlock(sampleConfig(`{"enabled":true,"token":"t","apiBase":"ftp://x"}`), "sample", defaults)
	require.ErrorContains(t, err, "channels.sample.apiBase")
	b, err := StartBlock(sampleConfig(`{"enabled":true,"token":"t"}`), "sample", defaults)
	require.NoError(t, err)
	require.Equal(t, "t", b.Token)
}
