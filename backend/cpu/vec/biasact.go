package vec

// BiasAct sets y[j] = act(x[j] + bias[j]) for j < len(x): bias may be nil
// (no addition, so -0 stays -0), act is max(·, 0) when relu (+0 for -0, NaN
// for NaN) and the identity otherwise. y must be at least as long as x,
// bias too where it is given; y may be x.
func BiasAct(x, bias []float32, relu bool, y []float32) {
	n := len(x)
	y = y[:n]
	if bias == nil && !relu { // the identity: a copy (none in place)
		if n > 0 && &x[0] != &y[0] {
			copy(y, x)
		}
		return
	}
	if bias != nil {
		bias = bias[:n]
	}
	done := biasActBlocks(x, bias, relu, y)
	var b []float32
	if bias != nil {
		b = bias[done:]
	}
	biasActGo(x[done:], b, relu, y[done:])
}

// biasActGo is BiasAct's portable loop.
func biasActGo(x, bias []float32, relu bool, y []float32) {
	y = y[:len(x)]
	for j, v := range x {
		if bias != nil {
			v += bias[j]
		}
		if relu {
			v = max(v, 0)
		}
		y[j] = v
	}
}
