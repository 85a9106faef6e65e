// Command summarize prints make test's closing lines, one per peer, from
// the report the tests wrote (NANOBOT_PEER_REPORT): used, skipped (and
// why), missing, or not asked.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/nanobot-durable/nanobot/internal/peer"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: summarize REPORT")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // no file: no test asked for a peer
		fmt.Fprintf(os.Stderr, "summarize: read the peer report: %v\n", err)
		os.Exit(1)
	}
	mode := "peers are optional here: a missing one skips its tests (CI=true or NANOBOT_REQUIRE_PEERS=1 makes it fail them)"
	if peer.Required() {
		mode = "peers are required (CI=true or NANOBOT_REQUIRE_PEERS=1): a missing one fails its tests"
	}
	fmt.Println("== real peers of this run;", mode)
	for _, line := range peer.Summary(string(data)) {
		fmt.Println(line)
	}
}
