// Package store holds the state the four commit pipeline stages touch,
// split by stage so that each piece has exactly one owner goroutine and
// needs no lock on the commit path:
//
//	Sequencer  sequence stage  versions, request ids and bans, status lookups
//	Resolver   resolve stage   write history, precondition conflicts
//	Persister  persist stage   key-value store, outcomes by request id, log writer
//	Log        goroutine-safe  subscription log: persist appends, subscribers read
//	Retention  goroutine-safe  retention policies; stages read the limits atomically
//
// It is pure Go with no network: the server's stages call it (see
// docs/api.md for which call belongs to which stage).
package store

import (
	"time"

	"weaseldb/server/config"
)

// Options sizes the store. Zero fields take the defaults below.
type Options struct {
	// Base retention: commit.request_id_retention_versions and _hours.
	RetentionVersions int64
	RetentionAge      time.Duration
	// MaxRequestIDs caps the request ids and banned ids remembered
	// (commit.max_request_ids); reaching it is counted and refuses the
	// commits that could be retries of what it dropped. Default 0: no cap,
	// the retention limits alone decide (memory grows with the ids within
	// retention, about 40 bytes each).
	MaxRequestIDs int
	// ResolverMaxBytes bounds the resolver's write history. Default 64 MiB.
	ResolverMaxBytes int64
	// LogMaxBytes bounds the subscription log. Default 64 MiB, and never
	// less than 2 × SubscriberMaxBehind (so a subscriber within its limit,
	// or over it during its grace period, is not trimmed past).
	LogMaxBytes int64
	// SubscriberMaxBehind is subscription.max_buffer_size_bytes.
	SubscriberMaxBehind int64
}

// Defaults of Options.
const (
	DefaultMaxRequestIDs    = 0 // no cap
	DefaultResolverMaxBytes = 64 << 20
	DefaultLogMaxBytes      = 64 << 20
)

// OptionsFromConfig takes the retention and subscription settings of c.
func OptionsFromConfig(c config.Config) Options {
	return Options{
		RetentionVersions:   c.Commit.RequestIDRetentionVersions,
		RetentionAge:        time.Duration(c.Commit.RequestIDRetentionHours) * time.Hour,
		MaxRequestIDs:       c.Commit.MaxRequestIDs,
		SubscriberMaxBehind: c.Subscription.MaxBufferSizeBytes,
	}
}

func (o Options) withDefaults() Options {
	d := config.Default()
	if o.RetentionVersions <= 0 {
		o.RetentionVersions = d.Commit.RequestIDRetentionVersions
	}
	if o.RetentionAge <= 0 {
		o.RetentionAge = time.Duration(d.Commit.RequestIDRetentionHours) * time.Hour
	}
	if o.MaxRequestIDs <= 0 {
		o.MaxRequestIDs = DefaultMaxRequestIDs // a negative cap means none too
	}
	if o.ResolverMaxBytes <= 0 {
		o.ResolverMaxBytes = DefaultResolverMaxBytes
	}
	if o.SubscriberMaxBehind <= 0 {
		o.SubscriberMaxBehind = d.Subscription.MaxBufferSizeBytes
	}
	if o.LogMaxBytes <= 0 {
		o.LogMaxBytes = DefaultLogMaxBytes
	}
	o.LogMaxBytes = max(o.LogMaxBytes, 2*o.SubscriberMaxBehind)
	return o
}

// Store is every piece, wired together. Each field's owner is in the
// package comment; hand each stage goroutine its own piece.
type Store struct {
	Options   Options
	Retention *Retention
	Sequencer *Sequencer
	Resolver  *Resolver
	Persister *Persister
	Log       *Log
}

// New builds an empty store at version 0.
func New(opts Options) *Store {
	opts = opts.withDefaults()
	r := NewRetention(Limits{Versions: opts.RetentionVersions, Age: opts.RetentionAge})
	log := NewLog(opts.LogMaxBytes, r)
	return &Store{
		Options:   opts,
		Retention: r,
		Sequencer: NewSequencer(r, opts.MaxRequestIDs),
		Resolver:  NewResolver(opts.ResolverMaxBytes),
		Persister: NewPersister(log),
		Log:       log,
	}
}

// Subscribe starts a subscription. Any goroutine.
func (s *Store) Subscribe(fromVersion int64) (*Subscription, error) {
	return s.Log.Subscribe(fromVersion)
}
