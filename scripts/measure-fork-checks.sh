#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here holding bin/fanout and the test binaries bin/cuda.test,
# bin/train.test, bin/link.test and bin/hybrid.test, and .data/planetoid-cora
# carried. The suites that the fork of the next step's sampling after the
# bottom layer (and the transposes' join at the backward pass) touch: the
# second stream and the CUDA conformance, the trainer's CUDA tests (replay
# against eager, Cora), the link GPU tests and the hybrid CUDA tests.
# Summary lines in $OUT/fork-checks.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=tiny; . "$(dirname "$0")/lib.sh"; setup fork-checks.log
export FANOUT_CORA_DIR=$R/.data/planetoid-cora
suite cuda backend/cuda 'TestBeside|TestConformance$|TestCapture|TestMarks' 200
suite train train 'CUDA' 240
suite link train/link 'TestGPU' 90
suite hybrid train/hybrid 'CUDA' 120
gzip -f "$O"/*.log.tmp 2>/dev/null; tar -czf "$O/suites.tgz" -C "$O" cuda.log train.log link.log hybrid.log && rm -f "$O"/{cuda,train,link,hybrid}.log
