package media_test

import (
	"testing"

	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/storetest"
)

func TestFilesContract(t *testing.T) {
	storetest.Media(t, func(*testing.T) storetest.Open[storetest.MediaHost] {
		return func(t *testing.T) storetest.MediaHost {
			return storetest.MediaHost{Store: media.Files{}, Workspace: t.TempDir()}
		}
	}, false)
}
