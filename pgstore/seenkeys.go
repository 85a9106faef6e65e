package pgstore

import (
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/nanobot-durable/nanobot/channels"
)

// DefaultClaimLease is how long a claim holds unless its holder renews it:
// a hand-over takes seconds, and a live holder renews every third of it.
const DefaultClaimLease = 2 * time.Minute

// Lease is how the claims of a SeenKeys expire.
type Lease struct {
	// Length is how long a claim holds without a renewal (DefaultClaimLease when 0).
	Length time.Duration
	// Holder names the gateway across its restarts (its host and home), so a
	// gateway restarted after a kill takes back at once what it had claimed;
	// "" is this set alone, whose claims others take after the lease.
	Holder string
	// Every is how often a live holder renews its claims (Length/3 when 0).
	Every time.Duration
	// Ahead moves the set's clock past the database's now() (tests; nil = none).
	Ahead func() time.Duration
}

// SeenKeys is channels.SeenKeys on the database: one set of the newest n
// keys, shared by every gateway, so a redelivery that reaches another
// gateway is still taken in once. A claim is a row with a lease: renewed
// while this process lives, taken by any gateway once it expires, so a
// gateway killed between claiming an event and handing it over loses
// nothing. A database error is logged and the keys count as new: a message
// answered twice beats a message lost.
type SeenKeys struct {
	db    *DB
	set   string
	n     int
	lease Lease
	run   string // this process's claims: a restart is another run of the same holder

	mu    sync.Mutex
	held  map[string]struct{} // claimed here, not yet done or forgotten
	renew *time.Timer
}

var _ channels.SeenKeys = (*SeenKeys)(nil)

// SeenKeys is the dedupe set named set, keeping its newest n keys, whose
// claims expire as lease says (the zero Lease: DefaultClaimLease).
func (db *DB) SeenKeys(set string, n int, lease Lease) *SeenKeys {
	if lease.Length <= 0 {
		lease.Length = DefaultClaimLease
	}
	if lease.Every <= 0 {
		lease.Every = lease.Length / 3
	}
	run := rand.Text()
	if lease.Holder == "" {
		lease.Holder = run
	}
	return &SeenKeys{db: db, set: set, n: max(n, 1), lease: lease, run: run, held: map[string]struct{}{}}
}

// Lease is the set's lease, its holder included (a restart opens the set with it).
func (s *SeenKeys) Lease() Lease { return s.lease }

// now is the database's clock, moved by Ahead; $3 is Ahead in microseconds.
const now = `(now() + $3::bigint * interval '1 microsecond')`

func (s *SeenKeys) ahead() int64 {
	if s.lease.Ahead == nil {
		return 0
	}
	return s.lease.Ahead().Microseconds()
}

// Has reports whether key was handled or is claimed now.
func (s *SeenKeys) Has(key string) bool {
	if key == "" {
		return false
	}
	ctx, cancel := bounded()
	defer cancel()
	var ok bool
	// A live claim counts, unless it is this holder's from before a restart: Claim takes that back.
	err := s.db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM channel_keys WHERE set_name = $1 AND key = $2
		AND (claimed_until IS NULL OR (claimed_until > `+now+` AND NOT (holder = $4 AND run <> $5))))`,
		s.set, key, s.ahead(), s.lease.Holder, s.run).Scan(&ok)
	if err != nil {
		s.warn("read", err)
	}
	return ok
}

// Add records the keys as handled and reports whether any was already there
// (an expired claim is not); the insert itself decides, so two gateways
// adding one key see one winner.
func (s *SeenKeys) Add(keys ...string) (dup bool) {
	var fresh []string
	seen := map[string]bool{}
	for _, k := range keys {
		switch {
		case k == "":
		case seen[k]:
			dup = true // one row is updated once per statement
		default:
			seen[k] = true
			fresh = append(fresh, k)
		}
	}
	if len(fresh) == 0 {
		return dup
	}
	ctx, cancel := bounded()
	defer cancel()
	var added int
	err := s.db.pool.QueryRow(ctx, `WITH ins AS (
		INSERT INTO channel_keys (set_name, key) SELECT $1, k FROM unnest($2::text[]) WITH ORDINALITY AS u(k, i) ORDER BY i
		ON CONFLICT (set_name, key) DO UPDATE SET holder = NULL, run = NULL, claimed_until = NULL,
			seq = nextval(pg_get_serial_sequence('channel_keys', 'seq'))
		WHERE channel_keys.claimed_until <= `+now+`
		RETURNING 1) SELECT count(*) FROM ins`, s.set, fresh, s.ahead()).Scan(&added)
	if err != nil {
		s.warn("record", err)
		return dup
	}
	if added > 0 {
		s.trim()
	}
	return dup || added < len(fresh)
}

// Claim takes key for the lease: it wins when the key is new, its claim
// expired, or its holder is this gateway before a restart. Of two gateways
// given one event at once, the insert picks one.
func (s *SeenKeys) Claim(key string) bool {
	if key == "" {
		return false
	}
	ctx, cancel := bounded()
	defer cancel()
	rows, err := s.db.pool.Query(ctx, `INSERT INTO channel_keys (set_name, key, holder, run, claimed_until)
		VALUES ($1, $2, $4, $5, `+now+` + $6::bigint * interval '1 microsecond')
		ON CONFLICT (set_name, key) DO UPDATE SET holder = EXCLUDED.holder, run = EXCLUDED.run,
			claimed_until = EXCLUDED.claimed_until, seq = nextval(pg_get_serial_sequence('channel_keys', 'seq'))
		WHERE channel_keys.claimed_until <= `+now+`
			OR (channel_keys.holder = $4 AND channel_keys.run <> $5)
		RETURNING 1`, s.set, key, s.ahead(), s.lease.Holder, s.run, s.lease.Length.Microseconds())
	if err != nil {
		s.warn("claim", err)
		return true
	}
	won := rows.Next()
	rows.Close()
	if err := rows.Err(); err != nil {
		s.warn("claim", err)
		return true
	}
	if !won {
		return false
	}
	s.trim()
	s.hold(key)
	return true
}

// Done records key as handled, whoever holds its claim now: its message was handed over.
func (s *SeenKeys) Done(key string) {
	if key == "" {
		return
	}
	s.release(key)
	ctx, cancel := bounded()
	defer cancel()
	_, err := s.db.pool.Exec(ctx, `INSERT INTO channel_keys (set_name, key) VALUES ($1, $2)
		ON CONFLICT (set_name, key) DO UPDATE SET holder = NULL, run = NULL, claimed_until = NULL`, s.set, key)
	if err != nil {
		s.warn("record", err)
	}
}

// Forget drops key, so its redelivery is taken in by whichever gateway gets
// it; a claim another gateway took over after this one's lease stays.
func (s *SeenKeys) Forget(key string) {
	s.release(key)
	ctx, cancel := bounded()
	defer cancel()
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM channel_keys WHERE set_name = $1 AND key = $2 AND (run IS NULL OR run = $3)`,
		s.set, key, s.run); err != nil {
		s.warn("forget", err)
	}
}

// RenewClaims extends the lease of every claim this process holds; a claim
// it lost (its lease ran out and another gateway took it) is let go, loudly.
func (s *SeenKeys) RenewClaims() {
	s.mu.Lock()
	keys := make([]string, 0, len(s.held))
	for k := range s.held {
		keys = append(keys, k)
	}
	s.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	ctx, cancel := bounded()
	defer cancel()
	rows, err := s.db.pool.Query(ctx, `UPDATE channel_keys SET claimed_until = `+now+` + $4::bigint * interval '1 microsecond'
		WHERE set_name = $1 AND key = ANY($2) AND run = $5 AND claimed_until IS NOT NULL RETURNING key`,
		s.set, keys, s.ahead(), s.lease.Length.Microseconds(), s.run)
	if err != nil {
		s.warn("renew the claims of", err) // kept: the next renewal tries again
		return
	}
	renewed := map[string]bool{}
	for rows.Next() {
		var k string
		if rows.Scan(&k) == nil {
			renewed[k] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		s.warn("renew the claims of", err)
		return
	}
	for _, k := range keys {
		if !renewed[k] {
			s.db.log.Warn("a claim on a handled key ran out before its hand-over; another gateway may take it too",
				"set", s.set, "key", k, "lease", s.lease.Length)
			s.release(k)
		}
	}
}

// hold keeps key's claim renewed until it is done or forgotten.
func (s *SeenKeys) hold(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held[key] = struct{}{}
	if s.renew == nil {
		s.renew = time.AfterFunc(s.lease.Every, s.renewAndRearm)
	}
}

func (s *SeenKeys) renewAndRearm() {
	s.RenewClaims()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.held) == 0 {
		s.renew = nil
		return
	}
	s.renew.Reset(s.lease.Every)
}

func (s *SeenKeys) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held, key)
}

// trim keeps the newest n keys.
func (s *SeenKeys) trim() {
	ctx, cancel := bounded()
	defer cancel()
	_, err := s.db.pool.Exec(ctx, `DELETE FROM channel_keys WHERE set_name = $1 AND seq <= (
		SELECT seq FROM channel_keys WHERE set_name = $1 ORDER BY seq DESC OFFSET $2 LIMIT 1)`, s.set, s.n)
	if err != nil {
		s.warn("trim", err)
	}
}

func (s *SeenKeys) warn(what string, err error) {
	s.db.log.Warn(fmt.Sprintf("cannot %s the handled keys", what), "set", s.set, "database", s.db.where, "error", err)
}
