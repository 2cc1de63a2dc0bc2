package backend

// Norm holds the ops of the normalisation layers a model may put after each
// hidden graph layer (Config.Norm in package nn): batch normalisation
// (Ioffe and Szegedy; statistics per column over a batch's rows, running
// statistics for evaluation) and layer normalisation (Ba et al.;
// statistics per row). Both scale and shift every column with learned
// vectors gamma and beta:
//
//	y[i, j] = gamma[j]·(x[i, j] - μ)·rsqrt(σ² + eps) + beta[j]
//
// with μ and σ² (biased) the column's over the live rows (batch) or the
// row's over its columns (layer). Sums are float64 in a fixed order, so
// every op gives the same bits on every run.
//
// Statistics layout: stats F32 [2·dim] holds the column means in [0, dim)
// and the biased variances in [dim, 2·dim); running statistics use the
// same layout (running means, then unbiased running variances).
//
// Norm is a capability: only models with normalisation use it, and
// nn.NewModel checks it (NormOf) when it builds one.
type Norm interface {
	// BatchNormStats overwrites stats (F32 [2·dim]) with the column means
	// and biased variances of rows [:n] of x (F32 [n.Cap, dim]), each a
	// float64 sum in a fixed order (the variance from the rows' deviations
	// from the mean, a second pass). With no live rows both are 0.
	BatchNormStats(x Buffer, n Count, dim int, stats Buffer)
	// NormApply writes y (F32 [n.Cap, dim]) from x (F32 [n.Cap, dim]) on
	// rows [:n] as above: with perRow false μ and σ² of column j are
	// stats[j] and stats[dim+j] (a batch's BatchNormStats, or running
	// statistics in evaluation); with perRow true (layer normalisation)
	// they are the row's own mean and biased variance over its dim
	// columns, and stats is unused (may be nil). gamma and beta are F32
	// [dim]. x and y may be the same buffer.
	NormApply(x Buffer, n Count, dim int, perRow bool, stats, gamma, beta Buffer, eps float32, y Buffer)
	// NormBackward is NormApply's backward in training (μ and σ² those of
	// the batch or row, so their own gradients are included): from x (as
	// NormApply read it) and dy, the gradient of y, it overwrites dx on
	// rows [:n] with x's gradient, and dgamma and dbeta (F32 [dim]) with
	// Σ_i dy[i, j]·x̂[i, j] and Σ_i dy[i, j] over the live rows, x̂ the
	// normalised x. dbias, when non-nil (F32 [dim]), is overwritten with
	// the column sums of dx (the gradient of a bias added before the
	// normalisation). stats is BatchNormStats's for x when perRow is
	// false, unused otherwise. dx may be dy, not x.
	NormBackward(x, dy Buffer, n Count, dim int, perRow bool, stats, gamma Buffer, eps float32, dx, dgamma, dbeta, dbias Buffer)
	// NormRunning moves the running statistics (F32 [2·dim]) towards a
	// batch's (stats, BatchNormStats's over n live rows) as PyTorch does:
	// running = (1-momentum)·running + momentum·batch, the batch's
	// variance made unbiased (times n/(n-1)). Nothing changes when n's
	// live value is below 2 or when unless (an I32 flag, element 0) is
	// non-nil and non-zero (a step that is not applied).
	NormRunning(stats Buffer, n Count, dim int, momentum float32, running, unless Buffer)

	// The ops of synchronised batch normalisation (a group's ranks
	// normalise by the statistics of all their rows): each rank turns its
	// statistics into moments, the group all-reduces them (Collective's
	// AllReduceSum), and each rank turns the sums back.

	// NormMoments overwrites moments (F32 [2·dim+1]) with the moments of
	// rows [:n] whose statistics are stats (BatchNormStats's): n·μ_j in
	// [0, dim), n·(σ²_j + μ_j²) in [dim, 2·dim), and n at 2·dim.
	NormMoments(stats Buffer, n Count, dim int, moments Buffer)
	// NormFromMoments overwrites stats (F32 [2·dim]) with the means and
	// biased variances of moments summed over a group (N = moments[2·dim]
	// rows; μ = Σn·μ/N, σ² = max(Σn·(σ²+μ²)/N - μ², 0), in float64; zeros
	// when N is 0), and count's int32 with N.
	NormFromMoments(moments Buffer, dim int, stats Buffer, count Count)
	// NormBackwardSums overwrites sums (F32 [2·dim+1]) with Σ_i dy[i,
	// j]·x̂[i, j] in [0, dim), Σ_i dy[i, j] in [dim, 2·dim) over rows [:n],
	// and n at 2·dim; x̂ is x normalised by stats (column statistics).
	NormBackwardSums(x, dy Buffer, n Count, dim int, stats Buffer, eps float32, sums Buffer)
	// NormBackwardApply is NormBackward's dx (column statistics) with the
	// sums of a group (NormBackwardSums's, summed): on rows [:n], dx =
	// gamma·rstd·(dy - sums[dim+j]/N - x̂·sums[j]/N), N = sums[2·dim].
	// dbias, when non-nil, is overwritten with the column sums of dx over
	// rows [:n]. dx may be dy, not x.
	NormBackwardApply(x, dy Buffer, n Count, dim int, stats, gamma Buffer, eps float32, sums, dx, dbias Buffer)
}

// NormOf is be's Norm (be itself, or the wrapper around a backend that has
// it), or an error naming be and the capability.
func NormOf(be Backend) (Norm, error) {
	return need[Norm](be, "the normalisation ops (backend.Norm)")
}
