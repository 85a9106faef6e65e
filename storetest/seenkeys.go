package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels"
)

// SeenKeysSize is how many keys the sets the opener opens hold.
const SeenKeysSize = 3

// SeenLease drives the claim leases of a shared set in its contract.
type SeenLease struct {
	// Length is the sets' lease.
	Length time.Duration
	// Pass moves the clock of every set the opener opens on by d.
	Pass func(d time.Duration)
	// Renew is set's holder renewing its claims, as it does while it lives.
	Renew func(set channels.SeenKeys)
	// Restarted opens set again as its gateway does after a restart.
	Restarted func(t *testing.T, set channels.SeenKeys) channels.SeenKeys
}

// SeenKeys runs the dedupe set's contract; shared backends (a database,
// lease non-nil) also take a key once across instances running at the same
// time, and hold a claim for its lease only.
func SeenKeys(t *testing.T, fresh Fresh[channels.SeenKeys], lease *SeenLease) {
	tests := []test[channels.SeenKeys]{
		{"DropRepeatsAndForgetTheOldest", seenDropRepeats},
		{"KeptAcrossARestart", seenRestart},
		{"ForgetReleasesAKey", seenForget},
	}
	if lease != nil {
		tests = append(tests, test[channels.SeenKeys]{"OneInstanceTakesEachKey", seenShared},
			test[channels.SeenKeys]{"AClaimHoldsAcrossGateways", seenClaimShared},
			test[channels.SeenKeys]{"AClaimOfADeadHolderIsTakenAfterItsLease", lease.deadHolder},
			test[channels.SeenKeys]{"ALiveHolderKeepsItsClaim", lease.liveHolder},
			test[channels.SeenKeys]{"ARestartedGatewayTakesBackItsClaim", lease.restarted})
	} else {
		tests = append(tests, test[channels.SeenKeys]{"AClaimWithoutDoneIsTakenAfterARestart", seenClaimOwn})
	}
	run(t, fresh, tests)
}

func seenDropRepeats(t *testing.T, open Open[channels.SeenKeys]) {
	r := open(t)
	require.False(t, r.Add("10"))
	require.True(t, r.Add("10"), "the same update again")
	require.False(t, r.Add("7"), "an older ID is still new")
	require.False(t, r.Add("11"))
	require.False(t, r.Add("12"))
	require.False(t, r.Add("10"), "forgotten once more than n newer keys came")
	require.True(t, r.Add("12"))
	require.True(t, r.Add("", "11"), "a redelivery matched by any of its keys; empty keys skipped")
	require.False(t, r.Has(""))
	require.True(t, r.Has("11"))
	require.False(t, r.Has("7"))
	require.True(t, r.Add("13", "13"), "a key twice in one call is a repeat")
}

func seenRestart(t *testing.T, open Open[channels.SeenKeys]) {
	require.False(t, open(t).Add("a", "b"))
	again := open(t)
	require.True(t, again.Has("a"), "keys handled before a restart stay handled")
	require.True(t, again.Add("b"))
	require.False(t, again.Add("c"))
}

func seenForget(t *testing.T, open Open[channels.SeenKeys]) {
	r := open(t)
	require.False(t, r.Add("a", "b", "c"))
	r.Forget("b") // b's message could not be handed over
	r.Forget("never-added")
	require.False(t, r.Has("b"))
	require.True(t, r.Has("a"))
	require.False(t, r.Add("b"), "a forgotten key is taken in again")
	require.False(t, r.Add("d"))
	require.False(t, r.Has("a"), "the oldest still goes first")
	require.True(t, r.Has("c"))
	require.True(t, r.Has("b"))
	r.Forget("c")
	require.False(t, open(t).Has("c"), "forgotten across a restart too")
	require.True(t, open(t).Has("d"))
}

func seenShared(t *testing.T, open Open[channels.SeenKeys]) {
	sets := []channels.SeenKeys{open(t), open(t)}
	var fresh atomic.Int64
	var wg sync.WaitGroup
	for g := range 10 {
		wg.Add(1)
		go func() { // two gateways receive the same redelivered update
			defer wg.Done()
			if !sets[g%2].Add("update-1") {
				fresh.Add(1)
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, 1, fresh.Load(), "one gateway takes the update in")
	for i := range SeenKeysSize {
		require.False(t, sets[i%2].Add(fmt.Sprint("k", i)))
	}
	require.False(t, sets[0].Has("update-1"), "the oldest is forgotten on every instance")
}

// seenClaimShared: on a shared set the claim itself records, so another gateway's claim of the
// same key loses even before the first is done.
func seenClaimShared(t *testing.T, open Open[channels.SeenKeys]) {
	a, b := open(t), open(t)
	require.True(t, a.Claim("ev-1"))
	require.False(t, b.Claim("ev-1"), "the other gateway's claim of the same event")
	a.Done("ev-1")
	require.False(t, a.Claim("ev-1"), "handled")
	require.True(t, b.Claim("ev-2"))
	b.Forget("ev-2") // its message could not be handed over
	require.True(t, a.Claim("ev-2"), "a released claim is taken again")
	require.False(t, a.Claim(""))
}

// seenClaimOwn: a set of one process records only at Done, so a process killed between claiming
// an event and handing it over takes the event in again after its restart.
func seenClaimOwn(t *testing.T, open Open[channels.SeenKeys]) {
	r := open(t)
	require.True(t, r.Claim("ev-1"))
	// killed here: no Done
	again := open(t)
	require.True(t, again.Claim("ev-1"), "the event is not lost with the process")
	again.Done("ev-1")
	require.False(t, open(t).Claim("ev-1"), "handled, across a restart")
	require.False(t, again.Claim(""))
}

// deadHolder: a gateway killed between claiming an event and handing it over
// renews nothing, so the event is taken by another gateway once the lease is over.
func (l *SeenLease) deadHolder(t *testing.T, open Open[channels.SeenKeys]) {
	dead, other, third := open(t), open(t), open(t)
	require.True(t, dead.Claim("ev-1"))
	// killed here: no Done, no renewal
	l.Pass(l.Length - time.Second)
	require.False(t, other.Claim("ev-1"), "the claim holds for its lease")
	require.True(t, other.Has("ev-1"))
	l.Pass(2 * time.Second)
	require.False(t, other.Has("ev-1"), "an expired claim is not a handled key")
	require.True(t, other.Claim("ev-1"), "the event is not lost with its holder")
	require.False(t, third.Claim("ev-1"), "the new claim holds")
	dead.Forget("ev-1") // a holder that only seemed dead lets go of what it no longer holds
	require.False(t, third.Claim("ev-1"), "and leaves the new claim be")
	other.Done("ev-1")
	l.Pass(2 * l.Length)
	require.False(t, third.Claim("ev-1"), "a handled key does not expire")
	require.True(t, third.Add("ev-1"), "a repeat")
}

// liveHolder: a holder renews its claim while a long hand-over runs.
func (l *SeenLease) liveHolder(t *testing.T, open Open[channels.SeenKeys]) {
	holder, other := open(t), open(t)
	require.True(t, holder.Claim("ev-1"))
	require.True(t, holder.Claim("ev-2"))
	holder.Done("ev-2")
	for range 3 {
		l.Pass(l.Length * 2 / 3)
		l.Renew(holder)
	}
	require.False(t, other.Claim("ev-1"), "renewed past three leases' worth of time")
	holder.Done("ev-1")
	l.Pass(2 * l.Length)
	require.False(t, other.Claim("ev-1"), "handled")
	require.False(t, other.Claim("ev-2"), "handled")
}

// restarted: a gateway restarted after a kill between claim and hand-over
// takes its own claims back at once; other gateways still wait for the lease.
func (l *SeenLease) restarted(t *testing.T, open Open[channels.SeenKeys]) {
	killed, other := open(t), open(t)
	require.True(t, killed.Claim("ev-1"))
	again := l.Restarted(t, killed)
	require.False(t, other.Claim("ev-1"))
	require.True(t, other.Has("ev-1"), "another gateway's live claim counts")
	require.False(t, again.Has("ev-1"), "its own claim from before the restart does not: a channel that asks Has first still takes it back")
	require.True(t, again.Claim("ev-1"), "the restarted gateway takes the event it had claimed")
	require.False(t, again.Claim("ev-1"), "once: a redelivery within the run is a repeat")
	require.False(t, other.Claim("ev-1"))
	again.Done("ev-1")
	require.False(t, l.Restarted(t, again).Claim("ev-1"), "handled")
}
