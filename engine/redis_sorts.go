package engine

// The two sorts whose orders Redis's replies show, written from their
// algorithms so that equal elements end up where Redis puts them: glibc's
// qsort (a merge sort) for full sorts, and Redis's pqsort (a partial
// quicksort) where only a range is wanted. SORT and the geo commands use
// both.

// glibcSort sorts a as glibc's qsort does.
func glibcSort[T any](a []T, cmp func(x, y *T) int) {
	glibcMergeSort(a, make([]T, len(a)), cmp)
}

// glibcMergeSort sorts a as glibc's qsort does (msort_with_tmp): top down,
// the left half len/2 long, the left element first unless the comparison
// says greater. Any stable sort gives the same order for a strict weak
// order; this one also gives glibc's for a comparison that is not one
// (GEOSEARCH's, when a distance is NaN). tmp holds at least len(a).
func glibcMergeSort[T any](a, tmp []T, cmp func(x, y *T) int) {
	n := len(a)
	if n <= 1 {
		return
	}
	n1 := n / 2
	glibcMergeSort(a[:n1], tmp, cmp)
	glibcMergeSort(a[n1:], tmp, cmp)
	i, j, k := 0, n1, 0
	for i < n1 && j < n {
		if cmp(&a[i], &a[j]) <= 0 {
			tmp[k] = a[i]
			i++
		} else {
			tmp[k] = a[j]
			j++
		}
		k++
	}
	// The rest of the left half follows; the rest of the right half is in
	// place already.
	k += copy(tmp[k:], a[i:n1])
	copy(a, tmp[:k])
}

// partialQuicksort sorts enough of a for the positions lrange..rrange to
// hold what a full sort would put there: Bentley and McIlroy's quicksort
// (median of three, or the ninther above 40 elements; three-way
// partition; insertion sort below 7) that skips the partitions outside
// the range. It is Redis's pqsort, whose exact swaps decide where equal
// elements end up.
func partialQuicksort[T any](a []T, cmp func(x, y *T) int, lrange, rrange int) {
	pqsortSpan(a, 0, len(a), cmp, lrange, rrange)
}

func pqsortSpan[T any](a []T, lo, n int, cmp func(x, y *T) int, lrange, rrange int) {
	swap := func(i, j int) { a[i], a[j] = a[j], a[i] }
	swapRun := func(i, j, k int) { // k elements from i and from j
		for ; k > 0; k-- {
			swap(i, j)
			i, j = i+1, j+1
		}
	}
	med3 := func(x, y, z int) int {
		if cmp(&a[x], &a[y]) < 0 {
			switch {
			case cmp(&a[y], &a[z]) < 0:
				return y
			case cmp(&a[x], &a[z]) < 0:
				return z
			}
			return x
		}
		switch {
		case cmp(&a[y], &a[z]) > 0:
			return y
		case cmp(&a[x], &a[z]) < 0:
			return x
		}
		return z
	}
	for {
		if n < 7 {
			for m := lo + 1; m < lo+n; m++ {
				for l := m; l > lo && cmp(&a[l-1], &a[l]) > 0; l-- {
					swap(l, l-1)
				}
			}
			return
		}
		m := lo + n/2
		if n > 7 {
			l, r := lo, lo+n-1
			if n > 40 {
				d := n / 8
				l = med3(l, l+d, l+2*d)
				m = med3(m-d, m, m+d)
				r = med3(r-2*d, r-d, r)
			}
			m = med3(l, m, r)
		}
		swap(lo, m)
		pa, pb := lo+1, lo+1
		pc, pd := lo+n-1, lo+n-1
		for {
			for pb <= pc {
				c := cmp(&a[pb], &a[lo])
				if c > 0 {
					break
				}
				if c == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				c := cmp(&a[pc], &a[lo])
				if c < 0 {
					break
				}
				if c == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		end := lo + n
		r := min(pa-lo, pb-pa)
		swapRun(lo, pb-r, r)
		r = min(pd-pc, end-pd-1)
		swapRun(pb, end-r, r)
		// Recurse into the smaller-than part, loop on the greater-than
		// part, each only when it overlaps the wanted range.
		overlaps := func(from, size int) bool { return !(rrange < from || lrange >= from+size) }
		if r := pb - pa; r > 1 && overlaps(lo, r) {
			pqsortSpan(a, lo, r, cmp, lrange, rrange)
		}
		r = pd - pc
		if r <= 1 {
			return
		}
		lo, n = end-r, r
		if !overlaps(lo, n) {
			return
		}
	}
}
