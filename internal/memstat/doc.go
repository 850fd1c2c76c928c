// Package memstat reads memory figures from Linux's /proc and parses the
// memory sizes that flags give:
//
//   - Self: the process's resident set (VmRSS) and its peak (VmHWM) from
//     /proc/self/status, in bytes. Elsewhere it reports that they are
//     unavailable, and callers print "n/a".
//   - Available: the system's MemAvailable from /proc/meminfo, in bytes
//     (what can be allocated without swapping: free memory plus the
//     reclaimable page cache).
//   - ParseBytes: "2GiB", "512MB", "4096" as a byte count.
//
// It imports no kiln package, so that any of them may use it.
package memstat
