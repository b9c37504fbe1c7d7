package lua

// StrToD is C's strtod as glibc implements it: the value of the longest
// prefix of s that strtod reads and that prefix's length (0 when it reads
// nothing). Added for the scripting libraries: cjson reads JSON numbers
// with strtod, and so accepts what it accepts (hex, inf, nan, "1.").
func StrToD(s string) (float64, int) { return strtod(s) }
