//go:build tools

// Pins redis_exporter (tests/test_metrics.py builds it from this module:
// go build -mod=readonly github.com/oliver006/redis_exporter). The checksum
// database does not list this version; go.sum holds its hash, taken once.
package tools

import _ "github.com/oliver006/redis_exporter"
