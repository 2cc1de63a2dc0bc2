package backend

// TieredGather is the capability of feature stores that keep their rows in
// two tiers, a cache in backend memory and the rest in host memory the
// device reads in place (featstore.Tiered, the hybrid mode's store). It is
// checked when such a store is built (TieredOf); a backend without it
// serves only stores that hold every row in one table (Dense.Gather).
type TieredGather interface {
	// GatherTiered copies F32 rows from two tiers: for i < n, with v =
	// ids[i] and s = slot[v] (slot I32 [N]), out[i, :] = cache[s, :] when
	// s >= 0, else host[v, :] (host F32 [N, dim], typically host memory
	// the device reads in place; cache F32 [rows, dim], may be nil when no
	// slot is >= 0). stats, when non-nil, is I64 [2]: the rows read from
	// host are added to stats[0] and all rows to stats[1].
	GatherTiered(cache, slot, host Buffer, dim int, ids Buffer, n Count, out, stats Buffer)
}

// TieredOf is be's TieredGather (be itself, or the wrapper around a
// backend that has it), or an error naming be and the capability.
func TieredOf(be Backend) (TieredGather, error) {
	return need[TieredGather](be, "the two-tier row gather (backend.TieredGather)")
}
