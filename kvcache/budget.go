package kvcache

import "math"

// BlocksForBudget is how many blocks of bytesPerBlock fit in budget bytes.
func BlocksForBudget(budget int64, bytesPerBlock int) int {
	if bytesPerBlock <= 0 || budget <= 0 {
		return 0
	}
	return int(min(budget/int64(bytesPerBlock), math.MaxInt32))
}
