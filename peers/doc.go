// Package peers holds the Go servers weaseldb's /ok is compared with
// (gnet_ok, fasthttp_ok), in a module of its own so that the main module
// does not depend on them: scripts/compare_peers.sh builds them from here.
package peers
