package benchserve

import "math"

var inf = math.Inf(1)
