package media_test

import (
	"testing"

	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/storetest"
)

func TestFilesContract(t *testing.T) {
	storetest.Media(t, func(*testing.T) storetest.Open[media.Store] {
		return func(*testing.T) media.Store { return media.Files{} }
	}, false)
}
