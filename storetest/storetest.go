package storetest

import "testing"

// Open opens one more instance on a test's data: another host on one
// database, another process on one directory.
type Open[T any] func(t *testing.T) T

// Fresh makes empty data for one test and returns its opener.
type Fresh[T any] func(t *testing.T) Open[T]

type test[T any] struct {
	name string
	fn   func(*testing.T, Open[T])
}

// run runs each test on fresh data.
func run[T any](t *testing.T, fresh Fresh[T], tests []test[T]) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, fresh(t)) })
	}
}
