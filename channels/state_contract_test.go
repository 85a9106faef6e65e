package channels_test

import (
	"path/filepath"
	"testing"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/storetest"
)

// TestFileStateContract: each channel's state in its own file under a home,
// reopened as a restart does.
func TestFileStateContract(t *testing.T) {
	storetest.ChannelState(t, func(t *testing.T) storetest.Open[func(string) channels.StateStore] {
		home := t.TempDir()
		return func(*testing.T) func(string) channels.StateStore {
			return func(channel string) channels.StateStore {
				return channels.Deps{Home: home}.ChannelState(channel, filepath.Join(home, "channels", channel+"-state.json"))
			}
		}
	}, false)
}
