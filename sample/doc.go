// Package sample is fanout's CPU reference neighbour sampler: it samples
// neighbours layer by layer, relabels them to local ids (destinations first)
// and returns plain index records (Block, MiniBatch), and it sizes the
// per-layer envelopes (Caps) that the replay driver provisions. It is also
// the reference that the GPU sampler must reproduce exactly.
//
// # Sampling convention (binding for every twin)
//
// Hops are numbered h = 0..L-1 from the seeds: hop h samples fanouts[h]
// neighbours for each of its destinations and uses the Philox stream h
// (rng.Key.Stream = h, h < 64). The block sampled at hop h feeds model layer
// L-1-h and is MiniBatch.Blocks[L-1-h]; Blocks[0] is the bottom (input)
// layer, and the destinations of Blocks[L-1] are the seeds. The
// destinations of hop h+1 are the sources of hop h.
//
// For a destination vertex v with degree d (its CSR row, in CSR order) and
// fanout k:
//   - k < 0 or k >= d: all d neighbours, in CSR order;
//   - k == 0: none;
//   - otherwise Robert Floyd's sampling without replacement: for
//     j = 0..k-1, let t = d-k+j and r = rng.Uniform(w_j, t+1), where w_j is
//     word j%4 of Philox(counter = (v, j/4, step, epoch<<8|h), key =
//     (uint32(seed), uint32(seed>>32))), i.e. key.Word(v, j); if position r
//     was already chosen at an earlier draw, choose position t, otherwise
//     choose r. The sampled neighbours are row[chosen_j] in selection order
//     (j = 0..k-1). Every k-subset is equally likely; the order within it
//     is not a uniform permutation (draw 0 never picks the last k-1 positions).
//
// With an Exclusion (LayerExcluding: link prediction's training hops,
// which take the step's positive edges out, as DGL's exclude_edges does),
// v samples its row with its e excluded entries removed before sampling:
// the rule above over d-e positions, with the same words, position p
// standing for the p-th entry of the row that is not excluded. A vertex
// without excluded entries samples as above.
//
// Offsets are the exclusive prefix sum of the per-destination counts, in
// destination order; the result depends only on (graph, dst, fanout, key),
// never on the thread count.
//
// # Relabelling convention
//
// Destinations keep local ids 0..len(dst)-1 (a vertex repeated in dst maps
// to its first position). Each neighbour not seen before, scanning the
// sampled neighbours in edge order, gets the next local id. SrcIDs lists the
// global ids by local id: destinations first, then new neighbours in order of
// first appearance.
package sample
