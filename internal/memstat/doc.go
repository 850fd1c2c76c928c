// Package memstat reads the process's memory figures from Linux's
// /proc/self/status: the resident set (VmRSS) and its peak (VmHWM), in
// bytes. Elsewhere Self reports that they are unavailable, and callers
// print "n/a".
package memstat
